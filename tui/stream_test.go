package tui

import (
	"testing"

	"agent/tui/screen"
)

// TestStreamingLayoutMatchesWhole: the incremental layout of a streaming
// answer equals the layout of the whole text at every prefix.
func TestStreamingLayoutMatchesWhole(t *testing.T) {
	doc := "# Title\n\nPara one\ncontinues.\n\n\n- a\n- b\n\n```go\nx := 1\n\ny := 2\n```\n\nAfter the code.\n\n> quote\n\n1. one\n2. two\n\nEnd"
	e := &entry{kind: entAssistant}
	for i := range len(doc) + 1 {
		e.text = doc[:i] // one entry growing, as the stream makes it
		for _, w := range []int{12, 40, 40, 12} {
			got := lines(e.markdown(w, nil))
			want := lines(screen.Markdown(doc[:i], w, nil))
			if got != want {
				t.Fatalf("prefix %d width %d:\n%s\nwant\n%s", i, w, got, want)
			}
		}
	}
}

func lines(ls []screen.Line) string {
	s := ""
	for _, l := range ls {
		s += l.String() + "|\n"
	}
	return s
}
