package screen

import (
	"strings"
	"testing"
)

func lines(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.String())
		b.WriteString("|\n")
	}
	return b.String()
}

func TestWrap(t *testing.T) {
	cases := []struct {
		name string
		in   string
		w    int
		want string
	}{
		{"words wrap at a space", "the quick brown fox", 10, "the quick|\nbrown fox|\n"},
		{"words that fill the width exactly", "the quick brown fox", 9, "the quick|\nbrown fox|\n"},
		{"a long word is cut", "abcdefghijklmnop", 5, "abcde|\nfghij|\nklmno|\np|\n"},
		{"spaces are kept", "  indented  spaces kept", 30, "  indented  spaces kept|\n"},
		{"line breaks and an empty line", "a\n\nb", 5, "a|\n|\nb|\n"},
		{"wide characters wrap whole", "漢字漢字漢字", 5, "漢字|\n漢字|\n漢字|\n"},
		{"a wide character wider than the line is a dot", "漢字", 1, "·|\n·|\n"},
		{"a tab expands to spaces", "tab\tx", 20, "tab    x|\n"},
		{"an escape character is dropped", "esc\x1b[31m", 20, "esc[31m|\n"},
		{"empty text is one empty line", "", 5, "|\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Wrap(c.in, c.w, Style{})
			if s := lines(got); s != c.want {
				t.Errorf("Wrap(%q, %d) =\n%s\nwant\n%s", c.in, c.w, s, c.want)
			}
			for _, l := range got {
				if l.Width() > c.w {
					t.Errorf("Wrap(%q, %d): line %q too wide", c.in, c.w, l.String())
				}
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	src := "# Title\n\nSome **bold** and `code`\nsoft break joined.\n\n- item one that wraps around\n- two\n  1. nested\n\n> quoted text\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n---\nafter"
	want := "" +
		"Title|\n" +
		"|\n" +
		"Some bold and code soft|\n" +
		"break joined.|\n" +
		"|\n" +
		"• item one that wraps|\n" +
		"  around|\n" +
		"• two|\n" +
		"  1. nested|\n" +
		"|\n" +
		"│ quoted text|\n" +
		"|\n" +
		"go|\n" +
		"  func main() {|\n" +
		"      println(\"hi\")|\n" +
		"  }|\n" +
		"────────────────────────|\n" +
		"after|\n"
	got := Markdown(src, 24, nil)
	if s := lines(got); s != want {
		t.Fatalf("Markdown =\n%s\nwant\n%s", s, want)
	}
	// Styles: the heading, bold and inline code.
	if got[0][0].Style != DefaultTheme.Heading {
		t.Errorf("heading style %+v", got[0][0].Style)
	}
	var sawBold, sawCode bool
	for _, sp := range got[2] {
		sawBold = sawBold || (sp.Text == "bold" && sp.Style.Attr&Bold != 0)
		sawCode = sawCode || (sp.Text == "code" && sp.Style == DefaultTheme.Code)
	}
	if !sawBold || !sawCode {
		t.Errorf("inline styles: %+v", got[2])
	}
}

// TestMarkdownStreaming: every prefix of a document renders, an open fence
// shows its code, and open inline markers stay literal.
func TestMarkdownStreaming(t *testing.T) {
	src := "Intro `co\n```py\nx = 1\n"
	got := lines(Markdown(src, 30, nil))
	want := "Intro `co|\npy|\n  x = 1|\n"
	if got != want {
		t.Fatalf("open fence:\n%s\nwant\n%s", got, want)
	}
	doc := "# H\n\n**b** `c` text\n\n```\ncode\n```\n- x\n"
	for i := range len(doc) + 1 {
		for _, l := range Markdown(doc[:i], 12, nil) {
			if l.Width() > 12 {
				t.Fatalf("prefix %d: %q too wide", i, l.String())
			}
		}
	}
	if got := lines(Markdown("**open bold", 30, nil)); got != "**open bold|\n" {
		t.Fatalf("open bold %q", got)
	}
}

func TestDiff(t *testing.T) {
	src := "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n ctx\n-old line\n+new line that is long\n"
	got := Diff(src, 16, nil)
	want := "--- a/x.go|\n+++ b/x.go|\n@@ -1,2 +1,2 @@|\n ctx|\n-old line|\n+new line that …|\n"
	if s := lines(got); s != want {
		t.Fatalf("Diff =\n%s\nwant\n%s", s, want)
	}
	styles := []Style{DefaultTheme.DiffHeader, DefaultTheme.DiffHeader, DefaultTheme.DiffHunk, {}, DefaultTheme.DiffRemove, DefaultTheme.DiffAdd}
	for i, st := range styles {
		if got[i][0].Style != st {
			t.Errorf("line %d style %+v, want %+v", i, got[i][0].Style, st)
		}
	}
	if Diff("", 10, nil) != nil {
		t.Error("empty diff")
	}
}

func TestClip(t *testing.T) {
	got := lines(Clip("short\na much longer line\x1b[0m", 8, Style{}))
	if got != "short|\na much …|\n" {
		t.Fatalf("Clip = %q", got)
	}
}
