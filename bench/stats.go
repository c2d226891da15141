package bench

import (
	"errors"
	"math"
)

// Student t distribution, computed rather than tabled so any number of
// repetitions works: the CDF comes from the regularized incomplete beta
// function, I_x(a, b), evaluated by its continued fraction (modified Lentz),
// and the quantile by bisection on the CDF.

// TQuantile returns the p quantile of Student's t with df degrees of
// freedom (df ≥ 1, 0 < p < 1). TQuantile(0.975, df) is the multiplier of a
// two-sided 95% interval.
func TQuantile(p float64, df int) float64 {
	if df < 1 || p <= 0 || p >= 1 {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, float64(df)) < p && hi < 1e12 {
		hi *= 2
	}
	for range 200 { // bisection halves [lo, hi]; 200 steps is far below float64's resolution limit
		mid := (lo + hi) / 2
		if tCDF(mid, float64(df)) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T ≤ t) for Student's t with df degrees of freedom.
func tCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(x, df/2, 0.5)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b).
func regIncBeta(x, a, b float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log(1-x))
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use the
	// symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function
// with the modified Lentz method.
func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		// even step
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		f *= d * c
		// odd step
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		f *= delta
		if math.Abs(delta-1) < 1e-14 {
			break
		}
	}
	return f
}

// Interval is a mean across repetitions with its two-sided 95% Student t
// interval. With one repetition there is no interval (Lo = Hi = Mean, N = 1).
type Interval struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// HasInterval reports whether the interval was computed from at least two
// repetitions.
func (iv Interval) HasInterval() bool { return iv.N >= 2 }

// ContainsZero reports whether the interval includes zero: the difference
// is not distinguishable from none. A single repetition never counts as
// distinguishable.
func (iv Interval) ContainsZero() bool {
	return !iv.HasInterval() || (iv.Lo <= 0 && iv.Hi >= 0)
}

// MeanCI95 returns the mean of xs with a two-sided 95% t interval.
func MeanCI95(xs []float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n == 1 {
		return Interval{N: 1, Mean: mean, Lo: mean, Hi: mean}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := TQuantile(0.975, n-1) * sd / math.Sqrt(float64(n))
	return Interval{N: n, Mean: mean, Lo: mean - half, Hi: mean + half}
}

// Percentiles are the latency quantiles every cell reports, in percent.
var Percentiles = []float64{50, 90, 99, 99.9}

// PercentileNames label Percentiles in tables and JSON keys.
var PercentileNames = []string{"p50", "p90", "p99", "p99.9"}

// Subtract returns target − direct percentile by percentile. Quantiles are
// not additive, so this is the difference of the two distributions' p-th
// values, not a distribution of differences; that is what "added latency at
// p99" means here. The slices must be the same length.
func Subtract(target, direct []float64) ([]float64, error) {
	if len(target) != len(direct) {
		return nil, errors.New("percentile lists differ in length")
	}
	out := make([]float64, len(target))
	for i := range target {
		out[i] = target[i] - direct[i]
	}
	return out, nil
}

// Fit is an ordinary least-squares line y = Intercept + Slope·x.
type Fit struct {
	N         int     `json:"n"`
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	R2        float64 `json:"r2"`
}

// LinearFit fits y against x. It needs two distinct x values.
func LinearFit(x, y []float64) (Fit, error) {
	n := len(x)
	if n != len(y) {
		return Fit{}, errors.New("x and y differ in length")
	}
	if n < 2 {
		return Fit{N: n}, errors.New("fewer than two points")
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy, syy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 {
		return Fit{N: n}, errors.New("all x values equal")
	}
	f := Fit{N: n, Slope: sxy / sxx}
	f.Intercept = my - f.Slope*mx
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	return f, nil
}
