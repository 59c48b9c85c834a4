package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// naiveGrep is the plain way: the whole file in memory, every line tried,
// context lines gathered around the matches.
func naiveGrep(path string, data []byte, re *regexp.Regexp, o GrepOptions) string {
	var starts, matches []int
	for off := 0; off < len(data); {
		end := lineEnd(data, off)
		starts = append(starts, off)
		if re.Match(trimCR(data[off:end])) {
			matches = append(matches, len(starts)-1)
		}
		off = end + 1
	}
	if len(matches) == 0 {
		return ""
	}
	switch o.Mode {
	case FilesWithMatches:
		return path + "\n"
	case Count:
		return fmt.Sprintf("%s:%d\n", path, len(matches))
	}
	line := func(n int) []byte {
		return trimCR(data[starts[n]:lineEnd(data, starts[n])])
	}
	isMatch := map[int]bool{}
	for _, m := range matches {
		isMatch[m] = true
	}
	var b strings.Builder
	last := -1
	for _, m := range matches {
		from, to := max(m-o.Before, last+1, 0), min(m+o.After, len(starts)-1)
		if last >= 0 && from > last+1 && (o.Before > 0 || o.After > 0) {
			b.WriteString("--\n")
		}
		for n := from; n <= to; n++ {
			sep := "-"
			if isMatch[n] {
				sep = ":"
			}
			if o.LineNumbers {
				fmt.Fprintf(&b, "%s%s%d%s%s\n", path, sep, n+1, sep, line(n))
			} else {
				fmt.Fprintf(&b, "%s%s%s\n", path, sep, line(n))
			}
			last = max(last, n)
		}
	}
	return b.String()
}

// randomText makes lines of random words, some very long, some with CR.
func randomText(r *rand.Rand, size int) []byte {
	words := []string{"alpha", "Reader", "NewReader(", "bufio", "x", "TODO", "reader", "ReAdEr", "é", "\t", "  ", "k", "s"}
	var b bytes.Buffer
	for b.Len() < size {
		n := r.IntN(12)
		if r.IntN(200) == 0 {
			n = 20000 // a line far longer than most
		}
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(10) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	if b.Len() > 0 && r.IntN(2) == 0 {
		b.Truncate(b.Len() - 1) // no final line feed
	}
	return b.Bytes()
}

func TestGrepAgreesWithThePlainWay(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 10, 5000, chunk - 7, chunk + 13, 3*chunk + 1, 700 << 10}
	files := map[string][]byte{}
	for i, size := range sizes {
		p := filepath.Join(root, fmt.Sprintf("d%d", i%3), fmt.Sprintf("f%d.txt", i))
		data := randomText(r, size)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	// One line longer than the read buffer: it grows and shrinks back.
	long := append(bytes.Repeat([]byte("y"), 3*chunk), " Reader end\nReader after\n"...)
	p := filepath.Join(root, "long.txt")
	if err := os.WriteFile(p, long, 0o644); err != nil {
		t.Fatal(err)
	}
	files[p] = long
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return pathLess(paths[i], paths[j]) })

	for _, pat := range []struct {
		expr string
		fold bool
	}{{"Reader", false}, {"reader", true}, {`[A-Z][a-z]+Reader\(`, false}, {`^alpha`, false}, {`x$`, false}, {`k\s+s`, true}, {"é", false}, {"TODO|bufio", false}} {
		for _, mode := range []Mode{FilesWithMatches, Count, Content} {
			for _, ctx := range [][2]int{{0, 0}, {2, 0}, {0, 3}, {2, 2}, {7, 5}} {
				if mode != Content && ctx != [2]int{} {
					continue
				}
				name := fmt.Sprintf("%s fold=%v mode=%d B=%d A=%d", pat.expr, pat.fold, mode, ctx[0], ctx[1])
				t.Run(name, func(t *testing.T) {
					m, err := Compile(pat.expr, pat.fold)
					if err != nil {
						t.Fatal(err)
					}
					o := GrepOptions{
						Walk: WalkOptions{Root: root}, Matcher: m, Mode: mode, Before: ctx[0], After: ctx[1],
						LineNumbers: ctx[0] != 7, MaxBytes: 1 << 40, MaxFileBytes: 16 << 20,
						Text: func(b []byte) string { return string(b) },
					}
					res, err := Grep(context.Background(), o)
					if err != nil {
						t.Fatal(err)
					}
					var want strings.Builder
					nfiles := 0
					for _, p := range paths {
						s := naiveGrep(p, files[p], m.re, o)
						if s != "" {
							nfiles++
						}
						want.WriteString(s)
					}
					if res.Output != want.String() {
						t.Errorf("output differs from the plain way\n%s", firstDiff(res.Output, want.String()))
					}
					if res.Files != nfiles || res.Full {
						t.Errorf("files %d full %v, want %d false", res.Files, res.Full, nfiles)
					}
				})
			}
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got %.200q\nwant %.200q", i+1, a, b)
		}
	}
	return "(same lines)"
}

func TestGrepLimits(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), strings.Repeat("match\n", 10))
	}
	m, _ := Compile("match", false)
	for _, tc := range []struct {
		name      string
		mode      Mode
		head, max int
		lines     int
	}{
		{"head_limit counts files", FilesWithMatches, 5, 1 << 20, 5},
		{"head_limit counts lines", Content, 23, 1 << 20, 23},
		{"bytes cut the output", Count, 0, 200, 200 / len(root+"/f00.txt:10\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Grep(context.Background(), GrepOptions{Walk: WalkOptions{Root: root}, Matcher: m, Mode: tc.mode, HeadLimit: tc.head, MaxBytes: tc.max, MaxFileBytes: 1 << 20, LineNumbers: true, Text: func(b []byte) string { return string(b) }})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
			// Files past a full output are not searched at all.
			if len(lines) != tc.lines || !res.Full || res.Files < 1 || res.Files >= 50 {
				t.Errorf("%d lines (want %d), full %v, files %d", len(lines), tc.lines, res.Full, res.Files)
			}
			if !strings.HasPrefix(lines[0], root+"/f00.txt") {
				t.Errorf("first line %q: not in path order", lines[0])
			}
		})
	}
}

func TestGrepBinaryDetection(t *testing.T) {
	root := t.TempDir()
	early := append(bytes.Repeat([]byte("a"), sniffLen-1), "\x00\nneedle\n"...)
	late := append(bytes.Repeat([]byte("a"), sniffLen), "\x00\nneedle\n"...)
	writeFile(t, filepath.Join(root, "early.bin"), string(early))
	writeFile(t, filepath.Join(root, "late.txt"), string(late))
	m, _ := Compile("needle", false)
	res, err := Grep(context.Background(), GrepOptions{Walk: WalkOptions{Root: root}, Matcher: m, MaxBytes: 1 << 20, MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != filepath.Join(root, "late.txt")+"\n" {
		t.Errorf("a NUL in the first 8 KiB makes a file binary, and only there: %q", res.Output)
	}
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGrepCancelsMidFile(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("needle in a line of text\n", 400000)) // 10 MB
	m, _ := Compile("needle", false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var printed atomic.Int64
	res, err := Grep(ctx, GrepOptions{
		Walk: WalkOptions{Root: root}, Matcher: m, Mode: Content, MaxBytes: 1 << 40, MaxFileBytes: 16 << 20,
		Text: func(b []byte) string {
			if printed.Add(1) == 1 {
				cancel() // the first line printed: the search is inside the file
			}
			return string(b)
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// The file's search stopped at the next read: at most a buffer's lines.
	if n := printed.Load(); n > chunk/25+1 {
		t.Errorf("%d lines printed after the cancel: the search did not stop within the file", n)
	}
	_ = res
}

func TestGrepCancelsMidWalk(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d/f.txt", i)), "needle\n")
	}
	m, _ := Compile("needle", false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int64
	_, err := Grep(ctx, GrepOptions{
		Walk: WalkOptions{Root: root}, Matcher: m, MaxBytes: 1 << 20, MaxFileBytes: 1 << 20,
		Filter: func(Entry) bool {
			if seen.Add(1) == 10 {
				cancel()
			}
			return true
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n := seen.Load(); n >= 300 {
		t.Errorf("all %d files were visited after the cancel", n)
	}
}

func TestGrepFileGrowingWhileRead(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "log.txt")
	writeFile(t, p, "needle one\n")
	f, size, err := openRegular(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	// The file grows between opening and reading.
	af, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	af.WriteString("needle two\n")
	af.Close()
	m, _ := Compile("needle", false)
	g := &grepper{o: GrepOptions{Matcher: m, Mode: Count, MaxBytes: 1 << 20, MaxFileBytes: 1 << 20}, res: &GrepResult{}, ctx: context.Background()}
	w := &grepWorker{buf: make([]byte, chunk)}
	s := fileSearch{g: g, w: w, f: f, path: p, limit: size, lineNo: 1}
	out, _, ok := s.run()
	if !ok || string(out) != p+":1\n" || !s.grew {
		t.Errorf("out %q ok %v grew %v: want the size at opening searched and the growth noted", out, ok, s.grew)
	}
}

// TestGrepEverySplit runs one file's search with read buffers of every
// small size, so that every position of a line, a match and its context
// falls on a buffer's edge somewhere, and compares with the plain way.
func TestGrepEverySplit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	text := "one Reader\r\ntwo\nthree Reader here\n\nfour\nReader five\nsix\nseven\neight Reader"
	writeFile(t, p, text)
	m, _ := Compile("Reader", false)
	for _, mode := range []Mode{FilesWithMatches, Count, Content} {
		for _, ctx := range [][2]int{{0, 0}, {1, 0}, {0, 2}, {2, 1}} {
			o := GrepOptions{Matcher: m, Mode: mode, Before: ctx[0], After: ctx[1], LineNumbers: true, MaxBytes: 1 << 20, MaxFileBytes: 1 << 20, Text: func(b []byte) string { return string(b) }}
			want := naiveGrep(p, []byte(text), m.re, o)
			for size := 1; size <= len(text)+1; size++ {
				f, n, err := openRegular(p)
				if err != nil {
					t.Fatal(err)
				}
				g := &grepper{o: o, res: &GrepResult{}, ctx: context.Background()}
				s := fileSearch{g: g, w: &grepWorker{buf: make([]byte, size)}, f: f, path: p, limit: n, lineNo: 1}
				out, _, _ := s.run()
				f.close()
				if s.big {
					g.big.Unlock()
				}
				if string(out) != want {
					t.Fatalf("mode %d context %v, buffer of %d bytes:\n got %q\nwant %q", mode, ctx, size, out, want)
				}
			}
		}
	}
}
