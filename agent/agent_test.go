package agent

import (
	"encoding/json"
	"errors"
	"testing"

	"agent/agent/tools"
	"agent/internal/fakemodel"
	"agent/providers"
	"agent/providers/chatcompat"
)

// twoProviders: two endpoints behind two different provider types.
func twoProviders(t *testing.T, a, b []fakemodel.Reply) (map[string]providers.Provider, *fakemodel.Server, *fakemodel.Server) {
	t.Helper()
	sa, sb := fakemodel.New(a...), fakemodel.New(b...)
	t.Cleanup(sa.Close)
	t.Cleanup(sb.Close)
	local, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{BaseURL: sa.URL()})
	if err != nil {
		t.Fatal(err)
	}
	reasoning, err := chatcompat.NewReasoningProvider(chatcompat.ReasoningOptions{APIKey: "k", BaseURL: sb.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]providers.Provider{"local": local, "reasoning": reasoning}, sa, sb
}

// TestAgentSetModel: switching provider and model mid-conversation sends
// the same conversation, system message and tools to the other provider
// (docs/reference/runtime.md, "The Agent API": no other change).
func TestAgentSetModel(t *testing.T) {
	provs, sa, sb := twoProviders(t,
		[]fakemodel.Reply{{Text: "from local"}},
		[]fakemodel.Reply{{Text: "from reasoning"}})
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	a, err := New(Options{Name: "helper", Providers: provs, DefaultModel: ModelRef{"local", "small"}, SystemMessage: "SYS", Tools: []tools.Tool{echo}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Name() != "helper" {
		t.Fatal(a.Name())
	}
	if res, err := a.Run(t.Context(), "first"); err != nil || res.Text != "from local" {
		t.Fatalf("%+v %v", res, err)
	}
	if err := a.SetModel(ModelRef{"reasoning", "big"}); err != nil {
		t.Fatal(err)
	}
	if m := a.Model(); m != (ModelRef{"reasoning", "big"}) {
		t.Fatalf("%+v", m)
	}
	if res, err := a.Run(t.Context(), "second"); err != nil || res.Text != "from reasoning" {
		t.Fatalf("%+v %v", res, err)
	}
	var ra, rb struct {
		Model    string
		Messages []map[string]any
		Tools    []any
	}
	json.Unmarshal(sa.Requests()[0], &ra)
	json.Unmarshal(sb.Requests()[0], &rb)
	if ra.Model != "small" || rb.Model != "big" {
		t.Fatalf("models %q %q", ra.Model, rb.Model)
	}
	// system, first, answer, second
	if len(rb.Messages) != 4 || rb.Messages[0]["content"] != "SYS" || rb.Messages[2]["content"] != "from local" {
		t.Fatalf("the conversation did not carry over: %+v", rb.Messages)
	}
	if len(ra.Tools) != 1 || len(rb.Tools) != 1 {
		t.Fatalf("tools %d %d", len(ra.Tools), len(rb.Tools))
	}
	if err := a.SetModel(ModelRef{"genai", "x"}); !errors.Is(err, ErrUnknownProvider) {
		t.Fatalf("err = %v", err)
	}
	if m := a.Model(); m.Provider != "reasoning" {
		t.Fatal("a refused switch changed the model")
	}
}

func TestAgentOptionsRefused(t *testing.T) {
	provs, _, _ := twoProviders(t, nil, nil)
	if _, err := New(Options{}); !errors.Is(err, ErrNoProvider) {
		t.Fatalf("err = %v", err)
	}
	if _, err := New(Options{Providers: provs, DefaultModel: ModelRef{Provider: "messages"}}); !errors.Is(err, ErrUnknownProvider) {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewRuntime(Options{Providers: provs}); !errors.Is(err, ErrUnknownProvider) {
		t.Fatalf("err = %v", err)
	}
}

func TestQuery(t *testing.T) {
	provs, _, _ := twoProviders(t, []fakemodel.Reply{{Text: "one shot"}}, nil)
	res, err := Query(t.Context(), Options{Providers: provs, DefaultModel: ModelRef{"local", "m"}}, "hi")
	if err != nil || res.Text != "one shot" || res.Status != StatusComplete {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestRuntime: sessions are separate conversations, found by id, switched
// one at a time, and all ended by Close.
func TestRuntime(t *testing.T) {
	provs, sa, sb := twoProviders(t,
		[]fakemodel.Reply{{Text: "a1"}, {Text: "b1"}},
		[]fakemodel.Reply{{Text: "b2"}})
	r, err := NewRuntime(Options{Providers: provs, DefaultModel: ModelRef{"local", "m"}})
	if err != nil {
		t.Fatal(err)
	}
	sa1, _ := r.StartSession("a")
	sb1, _ := r.StartSession("b")
	if _, err := r.StartSession("a"); err == nil {
		t.Fatal("duplicate id accepted")
	}
	if ids := r.Sessions(); len(ids) != 2 || ids[0] != "a" || ids[1] != "b" {
		t.Fatal(ids)
	}
	run(t, sa1, "in a")
	run(t, sb1, "in b")
	if err := r.SetModel("b", ModelRef{"reasoning", "r"}); err != nil {
		t.Fatal(err)
	}
	if res := run(t, sb1, "again in b"); res.Text != "b2" {
		t.Fatalf("%+v", res)
	}
	var req struct{ Messages []map[string]any }
	json.Unmarshal(sb.Requests()[0], &req)
	if len(req.Messages) != 3 || req.Messages[0]["content"] != "in b" {
		t.Fatalf("session b's conversation: %+v", req.Messages)
	}
	if len(sa.Requests()) != 2 {
		t.Fatal(len(sa.Requests()))
	}
	if s, ok := r.Session("a"); !ok || s != sa1 {
		t.Fatal("lookup")
	}
	if err := r.EndSession("a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Session("a"); ok {
		t.Fatal("ended session still listed")
	}
	r.Close()
	if _, err := sb1.Submit(TurnRequest{Prompt: "x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
	if _, err := r.StartSession(""); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
}
