package bench

import "math/rand/v2"

// LatinSquare returns a seeded balanced Latin square (Williams design) over
// n treatments: each row is an order of 0..n-1, every treatment appears in
// every position equally often, and every treatment immediately follows
// every other one equally often, so neither position nor the previous
// target's leftovers (warm caches, a busy CPU) favour anyone. For even n the
// square has n rows; for odd n balance needs the n rows and their mirror
// images, 2n rows. The seed shuffles the labels and the row order.
func LatinSquare(n int, seed uint64) [][]int {
	if n <= 0 {
		return nil
	}
	first := make([]int, n)
	// 0, 1, n-1, 2, n-2, ...
	lo, hi := 1, n-1
	for j := 1; j < n; j++ {
		if j%2 == 1 {
			first[j] = lo
			lo++
		} else {
			first[j] = hi
			hi--
		}
	}
	var rows [][]int
	for r := range n {
		row := make([]int, n)
		for j := range n {
			row[j] = (first[j] + r) % n
		}
		rows = append(rows, row)
	}
	if n%2 == 1 {
		for r := range n {
			row := make([]int, n)
			for j := range n {
				row[j] = rows[r][n-1-j]
			}
			rows = append(rows, row)
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	label := rng.Perm(n)
	for _, row := range rows {
		for j := range row {
			row[j] = label[row[j]]
		}
	}
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}
