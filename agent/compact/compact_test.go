package compact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"agent/providers"
)

func user(text string) providers.Message {
	return providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: text}}}
}

func assistant(text string, calls ...string) providers.Message {
	m := providers.Message{Role: providers.RoleAssistant}
	if text != "" {
		m.Content = append(m.Content, providers.Text{Text: text})
	}
	for _, id := range calls {
		m.Content = append(m.Content, providers.ToolCall{ID: id, Name: "Read", Arguments: json.RawMessage(`{"file_path":"` + id + `.go"}`)})
	}
	return m
}

func results(ids ...string) providers.Message {
	m := providers.Message{Role: providers.RoleTool}
	for _, id := range ids {
		m.Content = append(m.Content, providers.ToolResult{CallID: id, Content: []providers.Part{providers.Text{Text: "body of " + id}}})
	}
	return m
}

func bigResult(id string, bytes int) providers.Message {
	return providers.Message{Role: providers.RoleTool, Content: []providers.Part{
		providers.ToolResult{CallID: id, Content: []providers.Part{providers.Text{Text: strings.Repeat("x", bytes)}}}}}
}

func TestTokens(t *testing.T) {
	cases := []struct {
		name  string
		bytes int
		want  int
	}{
		{"nothing", 0, 0},
		{"negative", -5, 0},
		{"one byte rounds up", 1, 1},
		{"three bytes", 3, 1},
		{"four bytes are a token and a third, rounded up", 4, 2},
		{"a megabyte", 3 << 20, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Tokens(c.bytes); got != c.want {
				t.Errorf("Tokens(%d) = %d, want %d", c.bytes, got, c.want)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	img := providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Image{MediaType: "image/png", Data: make([]byte, 1<<20)}}}
	cases := []struct {
		name string
		msgs []providers.Message
		want int
	}{
		{"empty history", nil, 0},
		{"a short prompt counts its framing", []providers.Message{user("hi")}, Tokens(2 + messageOverhead)},
		{"an image counts a fixed amount, not its bytes", []providers.Message{img}, Tokens(messageOverhead) + ImageTokens},
		{"a tool call counts id, name and arguments", []providers.Message{assistant("", "c1")}, Tokens(messageOverhead + 2 + 4 + len(`{"file_path":"c1.go"}`))},
		{"a tool result counts its call id and body", []providers.Message{results("c1")}, Tokens(messageOverhead + 2 + len("body of c1"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Estimate(c.msgs); got != c.want {
				t.Errorf("Estimate = %d, want %d", got, c.want)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		at     float64
		want   int
	}{
		{"unknown window", Limits{}, 0, 0},
		{"200k window, 64k answers: 20000 + 13000 reserved", Limits{200000, 64000}, 0, 167000},
		{"200k window, 8k answers", Limits{200000, 8000}, 0, 179000},
		{"unknown answer size counts as 20000", Limits{200000, 0}, 0, 167000},
		{"1M window reserves 5%", Limits{1000000, 65536}, 0, 930000},
		{"small window never below half", Limits{32768, 32768}, 0, 16384},
		{"8k window never below half", Limits{8192, 4096}, 0, 4096},
		{"autoCompactAt lowers it", Limits{200000, 64000}, 0.6, 120000},
		{"autoCompactAt cannot raise it", Limits{200000, 64000}, 0.95, 167000},
		{"autoCompactAt may go below the half-window floor's default", Limits{32768, 32768}, 0.5, 16384},
		{"autoCompactAt out of range is ignored", Limits{200000, 64000}, 0.2, 167000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Threshold(c.limits, c.at); got != c.want {
				t.Errorf("Threshold(%+v, %v) = %d, want %d", c.limits, c.at, got, c.want)
			}
		})
	}
}

func TestPair(t *testing.T) {
	orphanCall := assistant("looking", "c1")
	twoMsgs := []providers.Message{user("q"), assistant("", "a", "b"), results("a"), results("b")}
	cases := []struct {
		name  string
		in    []providers.Message
		fixes int
		want  []providers.Message
	}{
		{"a paired history is returned as it is", []providers.Message{user("q"), assistant("", "c1"), results("c1"), assistant("done")}, 0, nil},
		{"an orphan result is removed", []providers.Message{user("q"), results("c9"), assistant("done")}, 1, []providers.Message{user("q"), assistant("done")}},
		{"an orphan call gets an unavailable result", []providers.Message{user("q"), orphanCall, user("next")}, 1,
			[]providers.Message{user("q"), orphanCall, {Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "c1", IsError: true, Content: []providers.Part{providers.Text{Text: Unavailable}}}}}, user("next")}},
		{"a call at the end of the history gets a result", []providers.Message{user("q"), orphanCall}, 1, nil},
		{"a result answering another call is removed and the call answered", []providers.Message{user("q"), assistant("", "c1"), results("c2")}, 2, nil},
		{"a duplicate result is removed", []providers.Message{user("q"), assistant("", "c1"), {Role: providers.RoleTool, Content: append(results("c1").Content, results("c1").Content...)}}, 1, nil},
		{"results out of order are put in call order", []providers.Message{user("q"), assistant("", "a", "b"), results("b", "a")}, 1, []providers.Message{user("q"), assistant("", "a", "b"), results("a", "b")}},
		{"results over two messages are joined", twoMsgs, 1, []providers.Message{user("q"), assistant("", "a", "b"), results("a", "b")}},
		{"a call id used twice in one answer keeps the first call", []providers.Message{user("q"), assistant("", "a", "a"), results("a")}, 1, []providers.Message{user("q"), assistant("", "a"), results("a")}},
		{"a call without an id is removed", []providers.Message{user("q"), {Role: providers.RoleAssistant, Content: []providers.Part{providers.ToolCall{Name: "Read"}}}}, 2, []providers.Message{user("q")}},
		{"a result in a user message is removed", []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "q"}, providers.ToolResult{CallID: "x"}}}}, 1, []providers.Message{user("q")}},
		{"a result after the answer without calls is an orphan", []providers.Message{user("q"), assistant("done"), results("c1")}, 1, []providers.Message{user("q"), assistant("done")}},
		{"the same id in two turns pairs by position", []providers.Message{user("q"), assistant("", "c1"), results("c1"), user("r"), assistant("", "c1"), results("c1")}, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, fixes := Pair(c.in)
			if fixes != c.fixes {
				t.Errorf("fixes = %d, want %d", fixes, c.fixes)
			}
			if err := Paired(got); err != nil {
				t.Errorf("the result is not paired: %v", err)
			}
			want := c.want
			if want == nil && c.fixes == 0 {
				want = c.in
			}
			if want != nil && render(got) != render(want) {
				t.Errorf("got\n%s\nwant\n%s", render(got), render(want))
			}
			if c.fixes == 0 && len(c.in) > 0 && &got[0] != &c.in[0] {
				t.Error("a paired history was copied")
			}
		})
	}
}

func render(msgs []providers.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s:", m.Role)
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.Text:
				fmt.Fprintf(&b, " text(%s)", p.Text)
			case providers.ToolCall:
				fmt.Fprintf(&b, " call(%s)", p.ID)
			case providers.ToolResult:
				t, _ := p.TextAndImages()
				fmt.Fprintf(&b, " result(%s,%v,%s)", p.CallID, p.IsError, t)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzPair: any history in, a paired one out, and pairing it again changes
// nothing.
func FuzzPair(f *testing.F) {
	f.Add([]byte("uacrtuac"))
	f.Add([]byte("ttaccrrru"))
	f.Add([]byte("aCCrRua"))
	f.Fuzz(func(t *testing.T, script []byte) {
		msgs := historyFromScript(script)
		out, _ := Pair(msgs)
		if err := Paired(out); err != nil {
			t.Fatalf("not paired after Pair: %v\n%s", err, render(out))
		}
		again, fixes := Pair(out)
		if fixes != 0 || render(again) != render(out) {
			t.Fatalf("Pair is not idempotent: %d fixes", fixes)
		}
		req := providers.Request{Messages: append([]providers.Message{user("framing")}, out...)}
		if err := req.Validate(); err != nil {
			t.Fatalf("a paired history is an invalid request: %v", err)
		}
	})
}

// historyFromScript builds a history from bytes: u user, a assistant,
// t tool message, c a call (C: without id), r a result answering the
// newest call id (R: answering an unknown id), x text.
func historyFromScript(script []byte) []providers.Message {
	var msgs []providers.Message
	ids := 0
	cur := func() *providers.Message {
		if len(msgs) == 0 {
			msgs = append(msgs, providers.Message{Role: providers.RoleUser})
		}
		return &msgs[len(msgs)-1]
	}
	for _, b := range script {
		switch b % 9 {
		case 0:
			msgs = append(msgs, providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "u"}}})
		case 1:
			msgs = append(msgs, providers.Message{Role: providers.RoleAssistant})
		case 2:
			msgs = append(msgs, providers.Message{Role: providers.RoleTool})
		case 3:
			ids++
			m := cur()
			m.Content = append(m.Content, providers.ToolCall{ID: fmt.Sprint("c", ids%4), Name: "Read", Arguments: json.RawMessage(`{}`)})
		case 4:
			m := cur()
			m.Content = append(m.Content, providers.ToolCall{Name: "Read"})
		case 5:
			m := cur()
			m.Content = append(m.Content, providers.ToolResult{CallID: fmt.Sprint("c", ids%4), Content: []providers.Part{providers.Text{Text: "r"}}})
		case 6:
			m := cur()
			m.Content = append(m.Content, providers.ToolResult{CallID: "unknown"})
		case 7:
			m := cur()
			m.Content = append(m.Content, providers.Text{Text: "x"})
		case 8:
			msgs = append(msgs, providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.Text{Text: "answer"}}})
		}
	}
	return msgs
}

func TestClearOldResults(t *testing.T) {
	big := 30000 // bytes: 10000 tokens each
	hist := []providers.Message{
		user("q1"), assistant("", "c1"), bigResult("c1", big), assistant("a1"),
		user("q2"), assistant("", "c2"), bigResult("c2", big), assistant("a2"),
		user("q3"), assistant("", "c3"), bigResult("c3", big), assistant("a3"),
	}
	t.Run("the newest output within keep stays, older is cleared", func(t *testing.T) {
		out, freed, ids := ClearOldResults(hist, len(hist), 15000)
		if freed < 15000 {
			t.Errorf("freed %d tokens, want about 20000", freed)
		}
		for _, c := range []struct {
			idx     int
			cleared bool
		}{{2, true}, {6, true}, {10, false}} {
			r := out[c.idx].Content[0].(providers.ToolResult)
			if cleared(r) != c.cleared {
				t.Errorf("message %d cleared = %v, want %v", c.idx, cleared(r), c.cleared)
			}
		}
		text, _ := out[2].Content[0].(providers.ToolResult).TextAndImages()
		if !strings.Contains(text, `call Read with {"file_path":"c1.go"}`) {
			t.Errorf("the placeholder does not say how to get it again: %q", text)
		}
		if r := hist[2].Content[0].(providers.ToolResult); cleared(r) {
			t.Error("the input history was modified")
		}
		if Paired(out) != nil {
			t.Error("the cleared history is not paired")
		}
		if strings.Join(ids, ",") != "c1,c2" {
			t.Errorf("cleared ids %v", ids)
		}
		again, _ := ClearResults(hist, ids)
		if render(again) != render(out) {
			t.Error("clearing by the ids recorded gives another history")
		}
	})
	t.Run("the current turn is never cleared", func(t *testing.T) {
		out, _, _ := ClearOldResults(hist, 4, 0)
		if !cleared(out[2].Content[0].(providers.ToolResult)) {
			t.Error("the first turn's result stays")
		}
		if cleared(out[6].Content[0].(providers.ToolResult)) || cleared(out[10].Content[0].(providers.ToolResult)) {
			t.Error("a result of the protected turns was cleared")
		}
	})
	t.Run("clearing twice frees nothing more", func(t *testing.T) {
		out, _, _ := ClearOldResults(hist, len(hist), 0)
		again, freed, _ := ClearOldResults(out, len(out), 0)
		if freed != 0 || &again[0] != &out[0] {
			t.Errorf("a second pass freed %d tokens", freed)
		}
	})
	t.Run("everything within keep is left alone", func(t *testing.T) {
		out, freed, _ := ClearOldResults(hist, len(hist), 1<<30)
		if freed != 0 || &out[0] != &hist[0] {
			t.Errorf("freed %d tokens", freed)
		}
	})
	t.Run("small results are not worth clearing", func(t *testing.T) {
		small := []providers.Message{user("q"), assistant("", "c1"), results("c1"), assistant("a")}
		_, freed, _ := ClearOldResults(small, len(small), 0)
		if freed != 0 {
			t.Errorf("freed %d tokens of a tiny result", freed)
		}
	})
}

func TestSplitPoint(t *testing.T) {
	hist := []providers.Message{
		user("q1"), assistant("", "c1"), bigResult("c1", 3000), assistant("a1"),
		user("q2"), assistant("", "c2"), bigResult("c2", 3000), assistant("a2"),
		user("q3"), assistant("a3"),
	}
	cases := []struct {
		name   string
		budget int
		want   int
	}{
		{"nothing fits", 5, len(hist)},
		{"only the newest turn fits", 100, 8},
		{"two turns fit", Estimate(hist[4:]) + 1, 4},
		{"everything fits", 1 << 30, 0},
		{"a budget inside a turn splits before its prompt", Estimate(hist[5:]) + 1, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SplitPoint(hist, c.budget); got != c.want {
				t.Errorf("SplitPoint = %d, want %d", got, c.want)
			}
		})
	}
}

func TestSummaryRequest(t *testing.T) {
	var hist []providers.Message
	for i := range 40 {
		id := fmt.Sprint("c", i)
		hist = append(hist, user(fmt.Sprint("question ", i)), assistant("", id), bigResult(id, 20000), assistant(fmt.Sprint("answer ", i)))
	}
	cases := []struct {
		name        string
		budget      int
		wantDropped bool
		wantCut     bool
	}{
		{"a large budget keeps every turn", 1 << 20, false, false},
		{"a small budget drops the oldest turns", 6000, true, false},
		{"a tiny budget cuts the newest turn", 1200, true, true},
		{"no budget still builds a request", 0, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := SummaryRequest(hist, SummaryOptions{Budget: c.budget, Instructions: "focus on the parser", FileInstructions: "keep test names"})
			if (s.Dropped > 0) != c.wantDropped || s.Cut != c.wantCut {
				t.Errorf("dropped %d cut %v", s.Dropped, s.Cut)
			}
			size := Estimate([]providers.Message{{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: s.System}}}, user(s.Prompt)})
			if c.budget > 1000 && size > c.budget {
				t.Errorf("the request takes %d tokens, over the budget of %d", size, c.budget)
			}
			for _, want := range []string{"focus on the parser", "keep test names", "verbatim", "Next step"} {
				if !strings.Contains(s.Prompt, want) {
					t.Errorf("the prompt lacks %q", want)
				}
			}
			if !c.wantDropped && !strings.Contains(s.Prompt, "question 0") {
				t.Error("the oldest turn is missing")
			}
			if !strings.Contains(s.Prompt, "answer 39") && !c.wantCut {
				t.Error("the newest turn is missing")
			}
			if strings.Count(s.Prompt, strings.Repeat("x", resultHead+resultTail+1)) > 0 {
				t.Error("a long tool output was not cut to head and tail")
			}
		})
	}
}

func TestRebuild(t *testing.T) {
	kept := []providers.Message{user("q"), assistant("a")}
	t.Run("summary, then the kept turns", func(t *testing.T) {
		out := Rebuild(SummaryMessage("did things", "/x/s.jsonl"), kept, "")
		if len(out) != 3 || out[0].Role != providers.RoleUser {
			t.Fatalf("got %s", render(out))
		}
		text := out[0].Content[0].(providers.Text).Text
		for _, want := range []string{"did things", "/x/s.jsonl", "Continue"} {
			if !strings.Contains(text, want) {
				t.Errorf("the summary message lacks %q", want)
			}
		}
	})
	t.Run("the open todo list rides with the summary", func(t *testing.T) {
		out := Rebuild(SummaryMessage("s", ""), kept, "- [ ] write tests")
		if len(out[0].Content) != 2 || !strings.Contains(out[0].Content[1].(providers.Text).Text, "write tests") {
			t.Errorf("got %s", render(out))
		}
	})
}

func BenchmarkPairPaired(b *testing.B) {
	var hist []providers.Message
	for i := range 500 {
		id := fmt.Sprint("c", i)
		hist = append(hist, user("q"), assistant("", id), results(id), assistant("a"))
	}
	b.ReportAllocs()
	for b.Loop() {
		Pair(hist)
	}
}
