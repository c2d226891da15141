package corpora

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Tally is blocked of total.
type Tally struct{ Blocked, Total int }

// Rate is the blocked share in percent (100 for no cases).
func (t Tally) Rate() float64 {
	if t.Total == 0 {
		return 100
	}
	return 100 * float64(t.Blocked) / float64(t.Total)
}

func (t Tally) String() string {
	return fmt.Sprintf("%.1f%% (%d/%d)", t.Rate(), t.Blocked, t.Total)
}

func (t *Tally) add(blocked bool) {
	t.Total++
	if blocked {
		t.Blocked++
	}
}

// By tallies the injections by key.
func (r *Result) By(key func(Case) string) map[string]*Tally {
	m := map[string]*Tally{}
	for _, c := range r.Injections {
		k := key(c)
		if m[k] == nil {
			m[k] = &Tally{}
		}
		m[k].add(c.Blocked)
	}
	return m
}

// Total tallies every injection.
func (r *Result) Total() Tally {
	var t Tally
	for _, c := range r.Injections {
		t.add(c.Blocked)
	}
	return t
}

// FalsePositives are the benign cases blocked.
func (r *Result) FalsePositives() []Case {
	var out []Case
	for _, c := range r.Benign {
		if c.Blocked {
			out = append(out, c)
		}
	}
	return out
}

// Miss is a group of missed injections of one signature.
type Miss struct {
	Shape, Sig string
	Count      int
	Examples   []Case
}

// Misses groups the injections allowed by shape and signature, largest
// first.
func (r *Result) Misses() []Miss {
	idx := map[string]*Miss{}
	for _, c := range r.Injections {
		if c.Blocked {
			continue
		}
		k := c.Shape + "\x00" + c.Sig
		m := idx[k]
		if m == nil {
			m = &Miss{Shape: c.Shape, Sig: c.Sig}
			idx[k] = m
		}
		m.Count++
		if len(m.Examples) < 2 {
			m.Examples = append(m.Examples, c)
		}
	}
	out := make([]Miss, 0, len(idx))
	for _, m := range idx {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Sig < out[j].Sig
	})
	return out
}

// Report writes the tables for the results (markdown); top is how many
// miss groups to list per protocol.
func Report(w io.Writer, rs []*Result, top int) {
	fmt.Fprintf(w, "| | %s |\n|---|%s\n", joinProto(rs, func(r *Result) string { return r.Protocol + " (" + r.Server + ")" }), strings.Repeat("---|", len(rs)))
	fmt.Fprintf(w, "| payloads tried | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprint(r.Payloads) }))
	fmt.Fprintf(w, "| placements that left their slot | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprint(r.Placed) }))
	fmt.Fprintf(w, "| of which the server parses | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprint(r.Parsed) }))
	fmt.Fprintf(w, "| of which it also resolves every name: **the injections measured** | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprint(r.Kept) }))
	fmt.Fprintf(w, "| **blocked** | %s |\n", joinProto(rs, func(r *Result) string { return "**" + r.Total().String() + "**" }))
	fmt.Fprintf(w, "| blocked only as a parse error of the engine | %s |\n", joinProto(rs, func(r *Result) string {
		n := 0
		for _, c := range r.Injections {
			if c.Blocked && c.ParseError {
				n++
			}
		}
		return fmt.Sprint(n)
	}))
	fmt.Fprintf(w, "| benign inputs / statements judged | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprintf("%d / %d", r.BenignInputs, len(r.Benign)) }))
	fmt.Fprintf(w, "| **false positives** | %s |\n", joinProto(rs, func(r *Result) string { return fmt.Sprintf("**%d**", len(r.FalsePositives())) }))
	fmt.Fprintf(w, "| benign statements the server did not parse (not judged) | %s |\n\n", joinProto(rs, func(r *Result) string { return fmt.Sprint(r.BenignUnparsed) }))

	table := func(title string, key func(Case) string, order []string, only ...bool) {
		seen := map[string]bool{}
		var keys []string
		for _, k := range order {
			keys = append(keys, k)
			seen[k] = true
		}
		var extra []string
		for _, r := range rs {
			if len(only) > 0 {
				break
			}
			for k := range r.By(key) {
				if !seen[k] {
					seen[k] = true
					extra = append(extra, k)
				}
			}
		}
		sort.Strings(extra)
		keys = append(keys, extra...)
		fmt.Fprintf(w, "| %s | %s |\n|---|%s\n", title, joinProto(rs, func(r *Result) string { return r.Protocol }), strings.Repeat("---|", len(rs)))
		for _, k := range keys {
			row := joinProto(rs, func(r *Result) string {
				if t := r.By(key)[k]; t != nil {
					return t.String()
				}
				return "–"
			})
			fmt.Fprintf(w, "| %s | %s |\n", k, row)
		}
		fmt.Fprintln(w)
	}
	slotNames := []string{}
	for _, s := range Slots {
		slotNames = append(slotNames, s.Name)
	}
	table("shape", func(c Case) string { return c.Shape }, ShapeOrder)
	table("slot", func(c Case) string { return c.Slot }, slotNames)
	table("corpus", func(c Case) string { return c.Source }, nil)
	// The corpus files with the most injections kept.
	fileKey := func(c Case) string { return c.Source + ": " + c.File }
	counts := map[string]int{}
	for _, r := range rs {
		for k, t := range r.By(fileKey) {
			counts[k] += t.Total
		}
	}
	var files []string
	for k := range counts {
		files = append(files, k)
	}
	sort.Slice(files, func(i, j int) bool {
		if counts[files[i]] != counts[files[j]] {
			return counts[files[i]] > counts[files[j]]
		}
		return files[i] < files[j]
	})
	if len(files) > 15 {
		files = files[:15]
	}
	table("corpus file (the 15 with most injections)", fileKey, files, true)

	// Which rules do the blocking: the injections each rule decided.
	fmt.Fprintf(w, "| deciding rule (injections blocked) | %s |\n|---|%s\n", joinProto(rs, func(r *Result) string { return r.Protocol }), strings.Repeat("---|", len(rs)))
	rules := map[string]bool{}
	var ruleNames []string
	for _, r := range rs {
		for _, c := range r.Injections {
			if c.Blocked && !rules[c.RuleID] {
				rules[c.RuleID] = true
				ruleNames = append(ruleNames, c.RuleID)
			}
		}
	}
	sort.Strings(ruleNames)
	for _, id := range ruleNames {
		fmt.Fprintf(w, "| %s | %s |\n", orDash(id), joinProto(rs, func(r *Result) string {
			n := 0
			for _, c := range r.Injections {
				if c.Blocked && c.RuleID == id {
					n++
				}
			}
			return fmt.Sprint(n)
		}))
	}
	fmt.Fprintln(w)

	for _, r := range rs {
		fmt.Fprintf(w, "### %s: the largest groups of missed injections\n\n", r.Protocol)
		fmt.Fprintf(w, "| count | shape | what the payload adds (tokens, literals as ?) | example (slot: payload) |\n|---|---|---|---|\n")
		for i, m := range r.Misses() {
			if i == top {
				break
			}
			var ex []string
			for _, c := range m.Examples {
				ex = append(ex, c.Slot+": `"+cell(c.Payload)+"`")
			}
			fmt.Fprintf(w, "| %d | %s | `%s` | %s |\n", m.Count, m.Shape, cell(m.Sig), strings.Join(ex, "<br>"))
		}
		fmt.Fprintln(w)
		if fps := r.FalsePositives(); len(fps) > 0 {
			fmt.Fprintf(w, "%s false positives:\n\n", r.Protocol)
			for i, c := range fps {
				if i == top {
					break
				}
				fmt.Fprintf(w, "- %s, rule `%s`: `%s`\n", c.Slot, c.RuleID, cell(c.Payload))
			}
			fmt.Fprintln(w)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "(no rule id)"
	}
	return s
}

func joinProto(rs []*Result, f func(*Result) string) string {
	var out []string
	for _, r := range rs {
		out = append(out, f(r))
	}
	return strings.Join(out, " | ")
}

// cell makes s safe in a markdown table cell and a code span, and short.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t':
			return ' '
		case '|':
			return '¦'
		case '`':
			return '\''
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// WriteTSV writes every injection and false positive, one a line:
// protocol, kind, slot, corpus, shape, verdict, rule, payload, file.
func WriteTSV(w io.Writer, rs []*Result) {
	fmt.Fprintln(w, "protocol\tkind\tslot\tcorpus\tshape\tverdict\trule\tpayload\tfile")
	esc := strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\r", "\\r")
	for _, r := range rs {
		for _, c := range r.Injections {
			fmt.Fprintf(w, "%s\tinjection\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Protocol, c.Slot, c.Source, c.Shape, verdict(c), c.RuleID, esc.Replace(c.Payload), c.File)
		}
		for _, c := range r.Benign {
			if c.Blocked {
				fmt.Fprintf(w, "%s\tfalse-positive\t%s\t%s\t\t%s\t%s\t%s\t\n", r.Protocol, c.Slot, c.Source, verdict(c), c.RuleID, esc.Replace(c.Payload))
			}
		}
	}
}

func verdict(c Case) string {
	if c.Blocked {
		return "blocked"
	}
	return "allowed"
}
