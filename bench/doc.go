// Package bench measures what a proxy in front of a database costs, the way
// it would be published: an open-loop load generator at fixed rates, latency
// measured from each request's intended send time (so a stall counts against
// every request that was due during it), targets compared in the same run at
// the same absolute rates, repetitions in a seeded balanced Latin square
// order, and added latency reported percentile by percentile with a Student
// t interval across repetitions.
//
// The package is a library joined to its CLI (fwctl bench) by a results file:
// Experiment.Run produces Results, which is written as JSON; Report, Charts
// and Gate read Results and never touch the network. The pieces, in the
// order a cell uses them:
//
//   - Pacer: when request i is due (constant rate or a seeded Poisson process).
//   - Run: one cell, a worker pool over Op connections; records into
//     hdrhistogram with RecordValue, one interval histogram per 10 s.
//   - CPUMeter: the target's CPU (a process's /proc/PID/stat or a cgroup),
//     behind an interface so cgroupstats can replace it.
//   - Analyse: added latency against direct, t intervals, saturation, fits.
//   - SelfCheck: pauses the database and checks that the generator saw it.
package bench
