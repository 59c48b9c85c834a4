package tools

import (
	"fmt"
	"strings"
)

// Bounds of the diff shown for Write and Edit (Result.Display, for the
// user only).
const (
	diffContext  = 3
	diffMaxEdits = 1000     // Myers' D; beyond it the changed middle is shown as replaced whole
	diffMaxBytes = 64 << 10 // of the rendered diff
)

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// linesOf splits text into lines that keep their "\n"; a last line
// without one is kept as is.
func linesOf(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unifiedDiff renders the change from a to b as a unified diff with three
// lines of context, labelled with name. Equal inputs give "".
func unifiedDiff(name, a, b string) string {
	if a == b {
		return ""
	}
	ops := diffLines(linesOf(a), linesOf(b))
	var out strings.Builder
	from := "a/" + name
	if a == "" {
		from = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ b/%s\n", from, name)
	// Group changes into hunks separated by more than 2*context equal lines.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		// Line numbers of the hunk's first line in a and b.
		la, lb := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				la++
			}
			if op.kind != '-' {
				lb++
			}
		}
		na, nb := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(la, na), hunkRange(lb, nb))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
		if out.Len() > diffMaxBytes {
			break
		}
	}
	return truncateOutput(out.String(), diffMaxBytes)
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// diffLines is a line diff: common prefix and suffix first (an edit
// touches a small middle), then Myers' O(ND) algorithm on the middle,
// bounded by diffMaxEdits.
func diffLines(a, b []string) []diffOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ops := make([]diffOp, 0, len(a)+len(b)-p-s)
	for _, l := range a[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, myers(a[p:len(a)-s], b[p:len(b)-s])...)
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	replaced := func() []diffOp {
		ops := make([]diffOp, 0, n+m)
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return replaced()
	}
	maxD := min(n+m, diffMaxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		// Keep the frontier before this round for the walk back.
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, d)
			}
		}
	}
	return replaced()
}

// backtrack walks the saved frontiers from the end back to the start;
// trace[d] is the frontier before round d, indexed from k = -d-1.
func backtrack(a, b []string, trace [][]int, last int) []diffOp {
	x, y := len(a), len(b)
	var rev []diffOp
	for d := last; d >= 0; d-- {
		vd := trace[d]
		get := func(k int) int { return vd[k+d+1] }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		}
		px := get(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, diffOp{' ', a[x-1]})
			x--
			y--
		}
		if d > 0 {
			if x == px {
				rev = append(rev, diffOp{'+', b[y-1]})
			} else {
				rev = append(rev, diffOp{'-', a[x-1]})
			}
		}
		x, y = px, py
	}
	ops := make([]diffOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}
