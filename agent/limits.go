package agent

// A model's context window and longest answer (docs/reference/runtime.md,
// "Context management"): the settings' models entry, else the built-in
// table of the provider definitions' catalogs, else, for the local
// provider, what the server itself says; otherwise unknown, and only the
// reactive path compacts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"agent/agent/compact"
	"agent/config"
	"agent/providers"
	"agent/providers/builtin"
	"agent/providers/chatcompat"
)

// ModelLimits are the limits of the chosen model as the settings and the
// built-in table know them. A models entry in the settings wins field by
// field over the table.
func ModelLimits(c ModelChoice, s *config.Settings) compact.Limits {
	var l compact.Limits
	l.Window, l.MaxOutput, _ = builtin.ModelLimits(c.ProviderID, c.Model)
	if s != nil {
		if m, ok := s.Context.Models[c.Model]; ok {
			if m.ContextWindow > 0 {
				l.Window = m.ContextWindow
			}
			if m.MaxOutputTokens > 0 {
				l.MaxOutput = m.MaxOutputTokens
			}
		}
	}
	if l.Window > 0 && l.MaxOutput >= l.Window {
		l.MaxOutput = 0 // a table entry the settings' window undercuts
	}
	return l
}

// Bounds of asking a local server.
const (
	localAskTimeout = 3 * time.Second
	maxLocalAnswer  = 1 << 20
)

// errNoAnswer: the server did not say (not that kind of server, or it
// does not know yet).
var errNoAnswer = errors.New("no answer")

// LocalWindow asks a local server for the context window it runs model
// with, where each kind of server says it: llama.cpp's /props, LM
// Studio's /api/v0/models/{model}, Ollama's /api/ps (the running model) and
// /api/show (a num_ctx parameter). baseURL is the chat endpoint's base
// (with its /v1); the servers' own paths are at its root. It returns the
// window and the kind of server that gave it.
func LocalWindow(ctx context.Context, client *http.Client, baseURL, model string) (int, string, error) {
	if baseURL == "" {
		baseURL = chatcompat.LocalBaseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return 0, "", fmt.Errorf("the base URL %q: not an absolute URL", baseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	root := strings.TrimSuffix(u.String(), "/")
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, localAskTimeout)
	defer cancel()
	asks := []struct {
		kind string
		ask  func() (int, error)
	}{
		{"llama.cpp", func() (int, error) { return llamaWindow(ctx, client, root) }},
		{"LM Studio", func() (int, error) { return lmStudioWindow(ctx, client, root, model) }},
		{"Ollama", func() (int, error) { return ollamaWindow(ctx, client, root, model) }},
	}
	for _, a := range asks {
		n, err := a.ask()
		if err == nil && n > 0 {
			return n, a.kind, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return 0, "", errNoAnswer
}

// getJSON fetches a JSON answer of at most 1 MiB.
func getJSON(ctx context.Context, client *http.Client, method, u string, body []byte, v any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxLocalAnswer))
		return errNoAnswer
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxLocalAnswer+1))
	if err != nil {
		return err
	}
	if len(data) > maxLocalAnswer {
		return errors.New("the answer is too large")
	}
	return json.Unmarshal(data, v)
}

// llamaWindow reads n_ctx from llama.cpp's /props.
func llamaWindow(ctx context.Context, client *http.Client, root string) (int, error) {
	var props struct {
		NCtx     int `json:"n_ctx"`
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := getJSON(ctx, client, http.MethodGet, root+"/props", nil, &props); err != nil {
		return 0, err
	}
	return max(props.Settings.NCtx, props.NCtx), nil
}

// lmStudioWindow reads the loaded context length (else the model's
// maximum) from LM Studio's /api/v0/models/{model}.
func lmStudioWindow(ctx context.Context, client *http.Client, root, model string) (int, error) {
	if model == "" {
		return 0, errNoAnswer
	}
	var m struct {
		ID     string `json:"id"`
		Max    int    `json:"max_context_length"`
		Loaded int    `json:"loaded_context_length"`
	}
	if err := getJSON(ctx, client, http.MethodGet, root+"/api/v0/models/"+url.PathEscape(model), nil, &m); err != nil {
		return 0, err
	}
	if m.Loaded > 0 {
		return m.Loaded, nil
	}
	return m.Max, nil
}

// ollamaWindow reads the context length of the running model from
// Ollama's /api/ps, else a num_ctx parameter of the model from /api/show.
// Ollama shortens a prompt over its window without an error, so the
// model's trained maximum, which Ollama does not run with unless told, is
// never taken for the window.
func ollamaWindow(ctx context.Context, client *http.Client, root, model string) (int, error) {
	if model == "" {
		return 0, errNoAnswer
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := getJSON(ctx, client, http.MethodGet, root+"/api/ps", nil, &ps); err == nil {
		for _, m := range ps.Models {
			if (m.Name == model || m.Model == model || strings.TrimSuffix(m.Name, ":latest") == model) && m.ContextLength > 0 {
				return m.ContextLength, nil
			}
		}
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	var show struct {
		Parameters string `json:"parameters"`
	}
	if err := getJSON(ctx, client, http.MethodPost, root+"/api/show", body, &show); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, errNoAnswer
}

// askLocalWindow asks the local server for its window, in the background,
// when neither the settings nor the table know it; a server that has not
// loaded the model yet (Ollama) is asked again after the first turn.
func (c *WorkspaceSession) askLocalWindow() {
	if c.Model.ProviderID != "local" || c.Session.Limits().Known() {
		return
	}
	sess, choice := c.Session, c.Model
	ask := func() bool {
		if !c.asking.TryLock() {
			return false
		}
		defer c.asking.Unlock()
		if sess.Limits().Known() {
			return true
		}
		n, _, err := LocalWindow(context.Background(), c.httpClient, choice.BaseURL, choice.Model)
		if err != nil {
			return false
		}
		l := sess.Limits()
		l.Window = n
		if l.MaxOutput >= n {
			l.MaxOutput = 0
		}
		sess.SetLimits(l)
		return true
	}
	go func() {
		if ask() {
			return
		}
		var once sync.Once
		// The first turn may complete before Subscribe returns: the
		// unsubscribe function reaches the goroutine through a channel.
		unsubc := make(chan func(), 1)
		unsubc <- sess.Subscribe(func(ev Event) {
			if ev.Kind == EventComplete {
				once.Do(func() {
					go func() {
						ask()
						(<-unsubc)()
					}()
				})
			}
		})
	}()
}

// SetModel switches the session's provider and model (/model): the
// following turns use them, the environment block names the model, and the
// context window is the new model's.
func (c *WorkspaceSession) SetModel(choice ModelChoice, p providers.Provider) {
	c.Session.SetModel(choice.ProviderID, p, choice.Model)
	c.Model = choice
	c.Session.SetLimits(ModelLimits(choice, c.Settings))
	c.Instructions.SetModelAndMode(choice.Model, c.Permissions.Mode())
	c.askLocalWindow()
}

// aliasModel is the model of provider id's catalog whose id names alias
// (Claude Code's agent definitions say sonnet, opus or haiku); "" keeps
// the parent's model when none does.
func aliasModel(id, alias string) string {
	d, ok := builtin.Lookup(id)
	if !ok {
		return ""
	}
	for _, m := range d.Models {
		if strings.Contains(m.ID, strings.ToLower(alias)) {
			return m.ID
		}
	}
	return ""
}
