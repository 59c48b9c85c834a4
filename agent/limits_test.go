package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agent/agent/compact"
	"agent/config"
)

func TestModelLimitsResolution(t *testing.T) {
	cases := []struct {
		name   string
		choice ModelChoice
		models map[string]config.ModelLimits
		want   compact.Limits
	}{
		{"the built-in table", ModelChoice{ProviderID: "messages", Model: "claude-sonnet-4-5"}, nil, compact.Limits{Window: 200000, MaxOutput: 64000}},
		{"settings win field by field", ModelChoice{ProviderID: "messages", Model: "claude-sonnet-4-5"}, map[string]config.ModelLimits{"claude-sonnet-4-5": {ContextWindow: 1000000}}, compact.Limits{Window: 1000000, MaxOutput: 64000}},
		{"settings for a model the table lacks", ModelChoice{ProviderID: "local", Model: "qwen3:8b"}, map[string]config.ModelLimits{"qwen3:8b": {ContextWindow: 32768, MaxOutputTokens: 4096}}, compact.Limits{Window: 32768, MaxOutput: 4096}},
		{"a settings window below the table's answer length drops it", ModelChoice{ProviderID: "messages", Model: "claude-sonnet-4-5"}, map[string]config.ModelLimits{"claude-sonnet-4-5": {ContextWindow: 50000}}, compact.Limits{Window: 50000}},
		{"unknown", ModelChoice{ProviderID: "local", Model: "llama3"}, nil, compact.Limits{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &config.Settings{Context: config.ContextSettings{Models: c.models}}
			if got := ModelLimits(c.choice, s); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestLocalWindow(t *testing.T) {
	type route map[string]string // "METHOD /path" → JSON answer
	cases := []struct {
		name   string
		routes route
		model  string
		want   int
		kind   string
	}{
		{"llama.cpp", route{"GET /props": `{"default_generation_settings":{"n_ctx":8192},"total_slots":1}`}, "any", 8192, "llama.cpp"},
		{"llama.cpp, n_ctx at the top", route{"GET /props": `{"n_ctx":4096}`}, "any", 4096, "llama.cpp"},
		{"LM Studio, loaded", route{"GET /api/v0/models/qwen2-7b": `{"id":"qwen2-7b","state":"loaded","max_context_length":32768,"loaded_context_length":16384}`}, "qwen2-7b", 16384, "LM Studio"},
		{"LM Studio, not loaded", route{"GET /api/v0/models/qwen2-7b": `{"id":"qwen2-7b","state":"not-loaded","max_context_length":32768}`}, "qwen2-7b", 32768, "LM Studio"},
		{"Ollama, running", route{"GET /api/ps": `{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","context_length":4096}]}`}, "llama3.2", 4096, "Ollama"},
		{"Ollama, num_ctx parameter", route{"GET /api/ps": `{"models":[]}`, "POST /api/show": `{"parameters":"num_ctx 16384\nstop \"<|eot|>\"","model_info":{"llama.context_length":131072}}`}, "llama3.2", 16384, "Ollama"},
		{"Ollama's trained maximum is not the window", route{"GET /api/ps": `{"models":[]}`, "POST /api/show": `{"parameters":"stop x","model_info":{"llama.context_length":131072}}`}, "llama3.2", 0, ""},
		{"a server that says nothing", route{}, "m", 0, ""},
		{"bad JSON", route{"GET /props": `{"n_ctx":`}, "m", 0, ""},
		{"a negative answer", route{"GET /props": `{"n_ctx":-5}`}, "m", 0, ""},
		{"an answer over 1 MiB", route{"GET /props": `{"n_ctx":8192,"pad":"` + strings.Repeat("x", 1<<20) + `"}`}, "m", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body, ok := c.routes[r.Method+" "+r.URL.Path]; ok {
					w.Write([]byte(body))
					return
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			n, kind, err := LocalWindow(context.Background(), srv.Client(), srv.URL+"/v1", c.model)
			if n != c.want || kind != c.kind || (err == nil) != (c.want > 0) {
				t.Errorf("got %d %q %v, want %d %q", n, kind, err, c.want, c.kind)
			}
		})
	}
	t.Run("a server that never answers is given up on", func(t *testing.T) {
		stop := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(stop)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if n, _, err := LocalWindow(ctx, srv.Client(), srv.URL+"/v1", "m"); err == nil || n != 0 {
			t.Errorf("got %d %v", n, err)
		}
	})
	t.Run("a base URL that is not a URL", func(t *testing.T) {
		if _, _, err := LocalWindow(context.Background(), nil, "::nope", "m"); err == nil {
			t.Error("no error")
		}
	})
}

func TestCompactSections(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"none", "# Title\ntext\n", nil},
		{"one section to the next heading of its level", "# A\n## Compact Instructions\nkeep test names\n- and errors\n## Build\nmake\n", []string{"keep test names\n- and errors"}},
		{"deeper headings stay inside", "## compact instructions\nkeep\n### Detail\nmore\n# Next\nout", []string{"keep\n### Detail\nmore"}},
		{"to the end of the file", "## Compact Instructions\nkeep all", []string{"keep all"}},
		{"a heading inside a code fence is not one", "```\n## Compact Instructions\n```\n", nil},
		{"an empty section says nothing", "## Compact Instructions\n\n## Other\n", nil},
		{"two sections", "## Compact Instructions\na\n## X\n## Compact Instructions\nb\n", []string{"a", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := compactSections(c.text)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
