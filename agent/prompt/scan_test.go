package prompt

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// scanCases are the import-line rules of docs/reference/runtime.md,
// "Imports"; want lists "LINE:PATH" per import found.
var scanCases = []struct {
	name string
	text string
	want []string
}{
	{"empty", "", nil},
	{"one import", "@docs/a.md\n", []string{"1:docs/a.md"}},
	{"no final line break", "text\n@a.md", []string{"2:a.md"}},
	{"crlf line endings", "x\r\n@a.md\r\ny\r\n", []string{"2:a.md"}},
	{"leading and trailing blanks", "  \t@a.md \t\n", []string{"1:a.md"}},
	{"home and absolute paths", "@~/x.md\n@/etc/y.md\n", []string{"1:~/x.md", "2:/etc/y.md"}},
	{"text around the path is not an import", "see @a.md\n@a.md please\n", nil},
	{"a lone at sign", "@\n@ \n", nil},
	{"a path with a space is not an import", "@a b.md\n", nil},
	{"inside a backtick fence", "```\n@a.md\n```\n@b.md\n", []string{"4:b.md"}},
	{"inside a tilde fence", "~~~ md\n@a.md\n~~~\n", nil},
	{"fence with an info string", "```markdown\n@a.md\n```\n", nil},
	{"unclosed fence runs to the end", "```\n@a.md\n\n@b.md\n", nil},
	{"a shorter fence does not close", "````\n```\n@a.md\n````\n@b.md\n", []string{"5:b.md"}},
	{"the other fence character does not close", "```\n~~~\n@a.md\n```\n@b.md\n", []string{"5:b.md"}},
	{"a closing fence takes no text", "```\n``` x\n@a.md\n```\n@b.md\n", []string{"5:b.md"}},
	{"fence indented three spaces", "   ```\n@a.md\n   ```\n", nil},
	{"four spaces is no fence", "    ```\n@a.md\n", []string{"2:a.md"}},
	{"backtick fence info with a backtick is no fence", "``` a`b\n@a.md\n", []string{"2:a.md"}},
	{"two backticks are no fence", "``\n@a.md\n``\n", nil},
	{"inline span across lines", "see `code\n@a.md\nmore` here\n@b.md\n", []string{"4:b.md"}},
	{"span with double backticks", "``x ` \n@a.md\n``\n", nil},
	{"unmatched backtick is literal", "a ` b\n@a.md\n", []string{"2:a.md"}},
	{"a span of other length does not close", "`` a\n@a.md\n` b\n", []string{"2:a.md"}},
	{"a blank line ends the span", "`a\n\n@a.md\n`\n", []string{"3:a.md"}},
	{"escaped backtick opens nothing", "\\`a\n@a.md\n`\n", []string{"2:a.md"}},
	{"escaped backslash then a backtick opens a span", "\\\\`a\n@a.md\n`\n", nil},
	{"a closed span before the line", "`a` b\n@a.md\n", []string{"2:a.md"}},
	{"import lines around a fence", "@a.md\n```\n@x.md\n```\n@b.md\n", []string{"1:a.md", "5:b.md"}},
	{"a fence interrupts the paragraph", "`a\n```\n`\n```\n@a.md\n", []string{"5:a.md"}},
}

func TestScanImports(t *testing.T) {
	for _, c := range scanCases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, im := range ScanImports(c.text) {
				got = append(got, fmt.Sprintf("%d:%s", im.Line, im.Path))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ScanImports(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

// FuzzScanImports holds the scanner to what holds for any text: each
// import is a line of the text that is "@" and a path, in order; nothing
// after an unclosed fence is an import; and a text without backticks or
// tildes has an import for every such line.
func FuzzScanImports(f *testing.F) {
	for _, c := range scanCases {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ims := ScanImports(text)
		prev := 0
		for _, im := range ims {
			if im.Line <= prev {
				t.Fatalf("lines out of order: %v", ims)
			}
			prev = im.Line
			if im.Start < 0 || im.End > len(text) || im.Start > im.End {
				t.Fatalf("bad offsets %d..%d in %d bytes", im.Start, im.End, len(text))
			}
			if p, ok := importPath(text[im.Start:im.End]); !ok || p != im.Path {
				t.Fatalf("line %q is not the import of %q", text[im.Start:im.End], im.Path)
			}
			if im.Start > 0 && text[im.Start-1] != '\n' {
				t.Fatalf("import at %d does not start a line", im.Start)
			}
			if strings.ContainsAny(im.Path, " \t\n") || im.Path == "" {
				t.Fatalf("bad path %q", im.Path)
			}
		}
		if got := ScanImports("```\n" + text); len(got) != 0 && !strings.Contains(text, "```") {
			t.Fatalf("imports after an unclosed fence: %v", got)
		}
		if !strings.ContainsAny(text, "`~") {
			want := 0
			for _, line := range strings.Split(text, "\n") {
				if _, ok := importPath(strings.TrimSuffix(line, "\r")); ok {
					want++
				}
			}
			if len(ims) != want {
				t.Fatalf("%d imports, want %d", len(ims), want)
			}
		}
	})
}

// BenchmarkScanImportsBackticks: a file-sized paragraph of import lines
// between backtick runs of which none closes another (each length occurs
// once), the case where a naive search for closers is quadratic.
func BenchmarkScanImportsBackticks(b *testing.B) {
	var sb strings.Builder
	lines := 0
	for ; sb.Len() < MaxFileBytes-1000; lines++ {
		sb.WriteString("x " + strings.Repeat("`", lines+1) + " a\n@x.md\n")
	}
	text := sb.String()
	if n := len(ScanImports(text)); n != lines {
		b.Fatalf("%d imports, want %d: a run found a closer", n, lines)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ScanImports(text)
	}
}
