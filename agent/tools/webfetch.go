package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"agent/internal/netguard"
	"agent/internal/quote"
)

const webFetchSchema = `{"type":"object","properties":{` +
	`"url":{"type":"string","minLength":1,"maxLength":8192,"description":"The http or https URL to fetch"},` +
	`"raw":{"type":"boolean","description":"Return HTML as it is instead of converted to text"}},` +
	`"required":["url"],"additionalProperties":false}`

type webFetchTool struct {
	policy netguard.Policy
	client *http.Client
	lim    Limits
}

type webFetchArgs struct {
	URL string `json:"url"`
	Raw bool   `json:"raw"`
}

func newWebFetch(p netguard.Policy, lim Limits) *webFetchTool {
	// The address policy of MCP URLs (docs/reference/mcp.md, "Address
	// policy"; docs/reference/runtime.md, "WebFetch"): every connection is
	// checked at dial time, no proxy. Redirects are not followed: the
	// response is returned and its target reported, so the model must ask
	// again, and the host is judged by the permission rules again.
	return &webFetchTool{
		policy: p,
		lim:    lim,
		client: &http.Client{
			Transport:     p.Transport(netguard.ClientOptions{}),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       lim.FetchTimeout,
		},
	}
}

func (t *webFetchTool) Spec() Spec {
	return Spec{
		Name: "WebFetch",
		Description: "Fetch a web page or document over http or https and return its text (HTML converted to text " +
			"with links kept). Redirects are not followed: their target is reported. Private and local addresses are refused.",
		Schema: json.RawMessage(webFetchSchema),
		Risk:   RiskExecute,
	}
}

// parseFetchURL checks a URL from the model and returns it with its host
// (lower case, without port or trailing dot), which permission rules match.
func parseFetchURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, "", badArgs("malformed URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", badArgs("only http and https URLs can be fetched, not %q", quote.V(u.Scheme))
	}
	if u.User != nil {
		return nil, "", badArgs("URLs with user information are refused")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, "", badArgs("the URL has no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, host, nil
}

func (t *webFetchTool) Target(args json.RawMessage) (Target, error) {
	var a webFetchArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	_, host, err := parseFetchURL(a.URL)
	if err != nil {
		return Target{}, err
	}
	return Target{Kind: TargetHost, Value: host}, nil
}

func (t *webFetchTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a webFetchArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	u, host, err := parseFetchURL(a.URL)
	if err != nil {
		return errorResult("%v", err)
	}
	if _, err := t.policy.CheckHost(host); err != nil {
		return errorResult("%s", refusal(host, err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errorResult("%v", err)
	}
	req.Header.Set("User-Agent", "agent-webfetch")
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5")
	resp, err := t.client.Do(req)
	if err != nil {
		var refused *netguard.RefusedError
		switch {
		case errors.As(err, &refused):
			return errorResult("%s", refusal(host, refused))
		case ctx.Err() != nil:
			return errorResult("interrupted")
		}
		return errorResult("fetching %s: %v", u.Redacted(), err)
	}
	defer resp.Body.Close()

	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			target := loc
			if lu, err := u.Parse(loc); err == nil {
				target = lu.String()
			}
			return Result{Content: fmt.Sprintf("%s answered %s and redirects to %s. Redirects are not followed; fetch that URL if it is the one you want.",
				u.Redacted(), resp.Status, target)}
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.lim.FetchBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return errorResult("interrupted")
		}
		return errorResult("reading %s: %v", u.Redacted(), err)
	}
	cut := int64(len(body)) > t.lim.FetchBytes
	if cut {
		body = body[:t.lim.FetchBytes]
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		text = textOf(body)
		if !a.Raw {
			text = htmlToText(text, resp.Request.URL)
		}
	case isTextType(mediaType) || (mediaType == "" && utf8.Valid(body) && !isBinary(body)):
		text = textOf(body)
	default:
		text = fmt.Sprintf("[%s content (%d bytes) is not shown: WebFetch returns text only]", mediaType, len(body))
	}
	if cut {
		text += fmt.Sprintf("\n[the response was longer than %d bytes; the rest was not read]", t.lim.FetchBytes)
	}
	header := fmt.Sprintf("URL: %s\nStatus: %s\nContent-Type: %s\n\n", u.Redacted(), resp.Status, orDefault(mediaType, "unknown"))
	res := Result{Content: truncateOutput(header+text, t.lim.Output)}
	if resp.StatusCode >= 400 {
		res.IsError = true
	}
	return res
}

func isTextType(t string) bool {
	if strings.HasPrefix(t, "text/") {
		return true
	}
	switch t {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ld+json", "application/rss+xml", "application/atom+xml", "application/x-yaml",
		"application/yaml", "application/toml", "image/svg+xml":
		return true
	}
	return strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml")
}

func refusal(host string, err error) string {
	var r *netguard.RefusedError
	if errors.As(err, &r) && r.Host != "" {
		// Refused by name, before any lookup (docs/reference/mcp.md,
		// "Address policy"; RFC 6761).
		return fmt.Sprintf("refused: %s is a %s name; WebFetch reaches public addresses only, "+
			"unless the user's settings allow that network (mcpAllowedNetworks)", host, r.Class)
	}
	if errors.As(err, &r) {
		return fmt.Sprintf("refused: %s resolves to a %s address (%s); WebFetch reaches public addresses only, "+
			"unless the user's settings allow that network (mcpAllowedNetworks)", host, r.Class, r.Addr)
	}
	return fmt.Sprintf("refused: %v", err)
}

// htmlToText renders an HTML page as plain text for the model: scripts,
// styles and comments dropped, block elements on their own lines, list
// items and headings marked, links kept as [text](href) with href made
// absolute against base (when given), entities decoded
// and white space collapsed outside <pre>. It is a tolerant scanner, not a
// parser: malformed markup degrades to text, never to an error.
func htmlToText(s string, base *url.URL) string {
	var out strings.Builder
	pre := 0
	var hrefs []string // open <a> elements
	space := false     // a collapsed space is pending
	newline := func(n int) {
		str := out.String()
		have := len(str) - len(strings.TrimRight(str, "\n"))
		if out.Len() == 0 {
			have = n
		}
		for ; have < n; have++ {
			out.WriteByte('\n')
		}
		space = false
	}
	text := func(t string) {
		t = html.UnescapeString(t)
		if pre > 0 {
			out.WriteString(t)
			return
		}
		for _, r := range t {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0' {
				space = true
				continue
			}
			if space {
				str := out.String()
				if len(str) > 0 && !strings.HasSuffix(str, "\n") {
					out.WriteByte(' ')
				}
				space = false
			}
			out.WriteRune(r)
		}
	}
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			text(s)
			break
		}
		text(s[:lt])
		s = s[lt:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+3:]
			continue
		}
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			text(s)
			break
		}
		tag := s[1:gt]
		s = s[gt+1:]
		closing := strings.HasPrefix(tag, "/")
		name := strings.ToLower(strings.TrimLeft(tag, "/"))
		if i := strings.IndexAny(name, " \t\n\r/"); i >= 0 {
			name = name[:i]
		}
		switch name {
		case "script", "style", "template", "svg", "noscript", "head":
			if !closing {
				end := strings.Index(strings.ToLower(s), "</"+name)
				if end < 0 {
					s = ""
				} else {
					s = s[end:]
				}
			}
		case "br":
			newline(1)
		case "p", "div", "section", "article", "header", "footer", "nav", "main", "aside", "table",
			"ul", "ol", "dl", "blockquote", "figure", "form", "hr", "tr":
			newline(2)
		case "h1", "h2", "h3", "h4", "h5", "h6":
			newline(2)
			if !closing {
				out.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
			}
		case "li":
			if !closing {
				newline(1)
				out.WriteString("- ")
			}
		case "td", "th":
			if !closing {
				space = true
			}
		case "pre":
			newline(2)
			if closing {
				pre = max(pre-1, 0)
			} else {
				pre++
			}
		case "a":
			if closing {
				if n := len(hrefs); n > 0 {
					if h := hrefs[n-1]; h != "" {
						out.WriteString("](" + h + ")")
					}
					hrefs = hrefs[:n-1]
				}
				continue
			}
			h := htmlAttr(tag, "href")
			if strings.HasPrefix(strings.ToLower(h), "javascript:") {
				h = ""
			} else if base != nil && h != "" && !strings.HasPrefix(h, "#") {
				if hu, err := base.Parse(h); err == nil {
					h = hu.String()
				}
			}
			hrefs = append(hrefs, h)
			if h != "" {
				if space && out.Len() > 0 && !strings.HasSuffix(out.String(), "\n") {
					out.WriteByte(' ')
				}
				space = false
				out.WriteString("[")
			}
		}
	}
	// Collapse runs of blank lines and trailing spaces.
	lines := strings.Split(out.String(), "\n")
	var b strings.Builder
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString(strings.Repeat("\n", min(blank, 1)+1))
		}
		blank = 0
		b.WriteString(l)
	}
	return b.String()
}

// htmlAttr returns the value of an attribute in a tag's text.
func htmlAttr(tag, name string) string {
	lower := strings.ToLower(tag)
	for i := 0; ; {
		j := strings.Index(lower[i:], name)
		if j < 0 {
			return ""
		}
		j += i
		i = j + len(name)
		if j > 0 && !strings.ContainsRune(" \t\n\r", rune(lower[j-1])) {
			continue
		}
		rest := strings.TrimLeft(tag[i:], " \t\n\r")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\r")
		if rest == "" {
			return ""
		}
		if q := rest[0]; q == '"' || q == '\'' {
			if end := strings.IndexByte(rest[1:], q); end >= 0 {
				return html.UnescapeString(rest[1 : end+1])
			}
			return ""
		}
		end := strings.IndexAny(rest, " \t\n\r>")
		if end < 0 {
			end = len(rest)
		}
		return html.UnescapeString(rest[:end])
	}
}
