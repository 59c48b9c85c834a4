package events

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"agent/internal/jose"
	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// Limits of grant files (docs/reference/events.md, "Grant files").
const (
	MaxGrantFileBytes = 16 << 10 // a grant file is at most 16 KiB
	MaxGrants         = 16       // grants per session
	MaxScopes         = 16       // entries of scopes
	MaxRateWindows    = 8        // entries of rate
	MaxGrantIDLength  = 64
	// MaxWindow and MaxTurnsPerWindow bound a rate window so that its
	// duration cannot overflow and the memory of its count stays small:
	// the count keeps the time of every admitted turn still inside the
	// window, at most MaxTurnsPerWindow of them.
	MaxWindow         = 366 * 24 * time.Hour
	MaxTurnsPerWindow = 100_000
	// maxURL and maxPrincipal bound the strings of a grant, which are
	// shown by `/events`.
	maxURL       = 2048
	maxPrincipal = 1024
)

// Rate is one rate window: at most MaxTurns admitted turns in any trailing
// Window (docs/reference/events.md, "Rate windows").
type Rate struct {
	Window   time.Duration
	MaxTurns int
}

// Grant is one validated grant file (docs/reference/events.md, "Grant
// files"). A Grant from ParseGrant or LoadGrants satisfies every rule of
// that section; New checks grants built by other means by the same rules.
type Grant struct {
	ID         string           // grantId: also the grant's label
	Issuer     string           // the authorization server whose tokens are accepted
	Resource   string           // the public URL of the endpoint and the audience of tokens
	Subject    string           // exactly one of Subject and Client is set:
	Client     string           // the one principal the grant admits
	Scopes     []string         // every token must carry all of them
	Algorithms []jose.Algorithm // nil in a file means all three; never empty after parsing
	Rate       []Rate           // nil: no rate windows
	File       string           // the file it came from, for messages; "" when built in code
}

// Principal returns the kind ("subject" or "client") and name of the
// grant's principal.
func (g *Grant) Principal() (kind, name string) {
	if g.Subject != "" {
		return "subject", g.Subject
	}
	return "client", g.Client
}

// GrantError is one problem of a grant file. Field is a JSONPath ("$" for
// the whole document) and Msg says what is wrong; neither ever holds a
// value from the file, which may by mistake hold a secret.
type GrantError struct {
	File  string // "" when the grant was not read from a file
	Field string
	Line  int // position in the file, 0 when unknown
	Col   int
	Msg   string
}

func (e *GrantError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString("grant file ")
		b.WriteString(e.File)
	} else {
		b.WriteString("grant")
	}
	b.WriteString(": ")
	b.WriteString(e.Field)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d, column %d)", e.Line, e.Col)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// grantFields are the members a grant file may have.
var grantFields = []string{"grantId", "issuer", "resource", "subject", "client", "scopes", "algorithms", "rate"}

// ParseGrant validates one grant file's content. Every problem found is
// returned, joined, as *GrantError values without File (LoadGrants fills
// it in).
func ParseGrant(data []byte) (Grant, error) {
	if len(data) > MaxGrantFileBytes {
		return Grant{}, &GrantError{Field: "$", Msg: "larger than 16 KiB"}
	}
	root, err := strictjson.Parse(data, strictjson.Options{MaxBytes: MaxGrantFileBytes, MaxDepth: 8})
	if err != nil {
		return Grant{}, syntaxProblem(err)
	}
	if root.Kind != strictjson.Object {
		return Grant{}, &GrantError{Field: "$", Line: root.Line, Col: root.Col, Msg: "must be a JSON object"}
	}
	var p problems
	var g Grant
	for _, m := range root.Members {
		path := string(strictjson.Root.Key(m.Key))
		v := m.Value
		switch m.Key {
		case "grantId":
			if s, ok := p.str(path, v); ok {
				if !validGrantID(s) {
					p.add(path, v, "must be 1 to 64 characters from A-Z a-z 0-9 _ -")
				} else {
					g.ID = s
				}
			}
		case "issuer":
			if s, ok := p.str(path, v); ok {
				if msg := checkURL(s, false); msg != "" {
					p.add(path, v, msg)
				} else {
					g.Issuer = s
				}
			}
		case "resource":
			if s, ok := p.str(path, v); ok {
				if msg := checkURL(s, true); msg != "" {
					p.add(path, v, msg)
				} else {
					g.Resource = s
				}
			}
		case "subject", "client":
			if s, ok := p.str(path, v); ok {
				if !validPrincipal(s) {
					p.add(path, v, "must be 1 to 1024 bytes of UTF-8 without control characters")
				} else if m.Key == "subject" {
					g.Subject = s
				} else {
					g.Client = s
				}
			}
		case "scopes":
			g.Scopes = p.scopes(path, v)
		case "algorithms":
			g.Algorithms = p.algorithms(path, v)
		case "rate":
			g.Rate = p.rates(path, v)
		default:
			p.add(string(strictjson.Root.Key(m.Key)), v, "unknown field (allowed: "+strings.Join(grantFields, ", ")+")")
		}
	}
	for _, name := range []string{"grantId", "issuer", "resource", "scopes"} {
		if root.Get(name) == nil {
			p.add("$."+name, root, "missing")
		}
	}
	if (root.Get("subject") == nil) == (root.Get("client") == nil) {
		p.add("$.subject, $.client", root, "exactly one of the two is required")
	}
	// The resource names its grant: its path ends in /events/<grantId>.
	if g.ID != "" && g.Resource != "" && !strings.HasSuffix(resourcePath(g.Resource), "/events/"+g.ID) {
		p.add("$.resource", root.Get("resource"), "path must end in /events/ followed by the grantId")
	}
	if g.Algorithms == nil && root.Get("algorithms") == nil {
		g.Algorithms = jose.Algorithms()
	}
	if len(p) > 0 {
		return Grant{}, errors.Join(p...)
	}
	return g, nil
}

// syntaxProblem reports a document that is not strict JSON. Only the
// position and the kind of fault are kept: the parser's message may quote
// a byte of the file.
func syntaxProblem(err error) error {
	if errors.Is(err, strictjson.ErrTooLarge) {
		return &GrantError{Field: "$", Msg: "larger than 16 KiB"}
	}
	var se *strictjson.SyntaxError
	if errors.As(err, &se) {
		msg := "not valid JSON"
		switch {
		case strings.HasPrefix(se.Msg, "duplicate key"):
			msg = "duplicate key"
		case strings.HasPrefix(se.Msg, "unexpected data after"):
			msg = "data after the JSON object"
		case strings.HasPrefix(se.Msg, "nesting deeper"):
			msg = "nested too deeply"
		case strings.HasPrefix(se.Msg, "empty document"):
			msg = "empty file"
		}
		return &GrantError{Field: "$", Line: se.Line, Col: se.Col, Msg: msg}
	}
	return &GrantError{Field: "$", Msg: "not valid JSON"}
}

type problems []error

func (p *problems) add(path string, v *strictjson.Value, msg string) {
	e := &GrantError{Field: path, Msg: msg}
	if v != nil {
		e.Line, e.Col = v.Line, v.Col
	}
	*p = append(*p, e)
}

func (p *problems) str(path string, v *strictjson.Value) (string, bool) {
	if v.Kind != strictjson.String {
		p.add(path, v, "must be a string")
		return "", false
	}
	return v.Str, true
}

func (p *problems) scopes(path string, v *strictjson.Value) []string {
	if v.Kind != strictjson.Array {
		p.add(path, v, "must be an array of strings")
		return nil
	}
	if len(v.Items) < 1 || len(v.Items) > MaxScopes {
		p.add(path, v, "must have 1 to 16 entries")
		return nil
	}
	var out []string
	bad := false
	for i, it := range v.Items {
		ip := path + "[" + fmt.Sprint(i) + "]"
		s, ok := p.str(ip, it)
		switch {
		case !ok:
			bad = true
		case !validScope(s):
			// RFC 6749 §3.3: a scope token is printable ASCII without
			// space, '"' or '\'; tokens carry scopes space-separated.
			p.add(ip, it, "must be a scope token (printable ASCII without space, '\"' or '\\')")
			bad = true
		case containsStr(out, s):
			p.add(ip, it, "repeats an earlier entry")
			bad = true
		default:
			out = append(out, s)
		}
	}
	if bad {
		return nil
	}
	return out
}

func (p *problems) algorithms(path string, v *strictjson.Value) []jose.Algorithm {
	if v.Kind != strictjson.Array {
		p.add(path, v, "must be an array of strings")
		return nil
	}
	if len(v.Items) == 0 {
		p.add(path, v, "must name at least one of RS256, ES256, EdDSA (leave it out for all three)")
		return nil
	}
	var out []jose.Algorithm
	bad := false
	for i, it := range v.Items {
		ip := path + "[" + fmt.Sprint(i) + "]"
		s, ok := p.str(ip, it)
		a := jose.Algorithm(s)
		switch {
		case !ok:
			bad = true
		case a != jose.RS256 && a != jose.ES256 && a != jose.EdDSA:
			p.add(ip, it, "must be RS256, ES256 or EdDSA")
			bad = true
		case containsStr(out, a):
			p.add(ip, it, "repeats an earlier entry")
			bad = true
		default:
			out = append(out, a)
		}
	}
	if bad {
		return nil
	}
	return out
}

func (p *problems) rates(path string, v *strictjson.Value) []Rate {
	if v.Kind != strictjson.Array {
		p.add(path, v, "must be an array of {windowMs, maxTurns} objects")
		return nil
	}
	if len(v.Items) < 1 || len(v.Items) > MaxRateWindows {
		p.add(path, v, "must have 1 to 8 windows")
		return nil
	}
	var out []Rate
	bad := false
	for i, it := range v.Items {
		ip := path + "[" + fmt.Sprint(i) + "]"
		if it.Kind != strictjson.Object {
			p.add(ip, it, "must be an object {windowMs, maxTurns}")
			bad = true
			continue
		}
		var r Rate
		for _, m := range it.Members {
			mp := ip + string(strictjson.Path("").Key(m.Key))
			switch m.Key {
			case "windowMs":
				n, ok := m.Value.Int()
				if !ok || n < 1 || n > MaxWindow.Milliseconds() {
					p.add(mp, m.Value, fmt.Sprintf("must be an integer from 1 to %d (366 days)", MaxWindow.Milliseconds()))
					bad = true
				} else {
					r.Window = time.Duration(n) * time.Millisecond
				}
			case "maxTurns":
				n, ok := m.Value.Int()
				if !ok || n < 1 || n > MaxTurnsPerWindow {
					p.add(mp, m.Value, fmt.Sprintf("must be an integer from 1 to %d", MaxTurnsPerWindow))
					bad = true
				} else {
					r.MaxTurns = int(n)
				}
			default:
				p.add(mp, m.Value, "unknown field (allowed: windowMs, maxTurns)")
				bad = true
			}
		}
		for _, name := range []string{"windowMs", "maxTurns"} {
			if it.Get(name) == nil {
				p.add(ip+"."+name, it, "missing")
				bad = true
			}
		}
		out = append(out, r)
	}
	if bad {
		return nil
	}
	return out
}

func containsStr[T ~string](list []T, s T) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func validGrantID(s string) bool {
	if len(s) < 1 || len(s) > MaxGrantIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validScope(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func validPrincipal(s string) bool {
	if s == "" || len(s) > maxPrincipal || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

// checkURL returns what is wrong with an issuer or resource URL, or "".
// Both are https URLs without user info or fragment; neither may have a
// query: RFC 8414 §2 forbids one in an issuer, and
// docs/reference/events.md, "Grant files", in a resource. The messages
// never repeat the URL.
func checkURL(s string, resource bool) string {
	if len(s) > maxURL {
		return "must be at most 2048 bytes"
	}
	u, err := url.Parse(s)
	if err != nil {
		return "must be a valid https URL"
	}
	switch {
	case u.Scheme != "https" || u.Opaque != "":
		return "must be an https URL"
	case u.Host == "" || u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not carry user info"
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "must not have a fragment"
	case u.RawQuery != "" || u.ForceQuery:
		return "must not have a query"
	}
	if !resource {
		// The issuer must also be usable for discovery.
		if _, err := jose.NewRemoteKeys(s, jose.RemoteOptions{}); err != nil {
			return "must be an https URL usable for discovery"
		}
	}
	return ""
}

// resourcePath is the escaped path of a validated resource URL: the path
// that requests for the grant arrive at.
func resourcePath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.EscapedPath()
}

// LoadGrants reads and validates grant files, in order. Any problem refuses
// them all (docs/reference/events.md, "Starting a session with grants": an
// invalid grant refuses the start): the error joins one *GrantError per
// problem, each naming its file and field.
func LoadGrants(paths []string) ([]Grant, error) {
	var errs []error
	var grants []Grant
	if len(paths) > MaxGrants {
		errs = append(errs, fmt.Errorf("--external-event-grant: at most %d grants per session, %d given", MaxGrants, len(paths)))
	}
	seen := map[string]string{} // grant id → file
	for _, path := range paths {
		data, err := securefile.ReadFile(path, MaxGrantFileBytes)
		if err != nil {
			errs = append(errs, &GrantError{File: path, Field: "$", Msg: readProblem(err)})
			continue
		}
		g, err := ParseGrant(data)
		if err != nil {
			errs = append(errs, withFile(err, path))
			continue
		}
		g.File = path
		if other, dup := seen[g.ID]; dup {
			errs = append(errs, &GrantError{File: path, Field: "$.grantId", Msg: "the same grant id as " + other})
			continue
		}
		seen[g.ID] = path
		grants = append(grants, g)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return grants, nil
}

// readProblem says why a grant file could not be read, without repeating
// the path the message already names.
func readProblem(err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, securefile.ErrTooLarge):
		return "larger than 16 KiB"
	case errors.As(err, &pe):
		return "cannot read: " + pe.Err.Error()
	}
	return "cannot read: " + err.Error()
}

// withFile sets File on every *GrantError joined in err.
func withFile(err error, file string) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	for _, e := range list {
		var ge *GrantError
		if errors.As(e, &ge) {
			ge.File = file
		}
	}
	return err
}

// checkGrant applies ParseGrant's rules to a Grant built in code, so that
// New never serves a grant a file could not have described.
func checkGrant(g *Grant) error {
	bad := func(field, msg string) error { return &GrantError{File: g.File, Field: field, Msg: msg} }
	switch {
	case !validGrantID(g.ID):
		return bad("$.grantId", "must be 1 to 64 characters from A-Z a-z 0-9 _ -")
	case checkURL(g.Issuer, false) != "":
		return bad("$.issuer", checkURL(g.Issuer, false))
	case checkURL(g.Resource, true) != "":
		return bad("$.resource", checkURL(g.Resource, true))
	case !strings.HasSuffix(resourcePath(g.Resource), "/events/"+g.ID):
		return bad("$.resource", "path must end in /events/ followed by the grantId")
	case (g.Subject == "") == (g.Client == ""):
		return bad("$.subject, $.client", "exactly one of the two is required")
	case g.Subject != "" && !validPrincipal(g.Subject), g.Client != "" && !validPrincipal(g.Client):
		return bad("$.subject, $.client", "must be 1 to 1024 bytes of UTF-8 without control characters")
	case len(g.Scopes) < 1 || len(g.Scopes) > MaxScopes:
		return bad("$.scopes", "must have 1 to 16 entries")
	case len(g.Rate) > MaxRateWindows:
		return bad("$.rate", "must have 1 to 8 windows")
	}
	for i, s := range g.Scopes {
		if !validScope(s) || containsStr(g.Scopes[:i], s) {
			return bad(fmt.Sprintf("$.scopes[%d]", i), "must be a distinct scope token")
		}
	}
	for i, a := range g.Algorithms {
		if a != jose.RS256 && a != jose.ES256 && a != jose.EdDSA || containsStr(g.Algorithms[:i], a) {
			return bad(fmt.Sprintf("$.algorithms[%d]", i), "must be a distinct one of RS256, ES256, EdDSA")
		}
	}
	for i, r := range g.Rate {
		if r.Window <= 0 || r.Window > MaxWindow || r.Window%time.Millisecond != 0 {
			return bad(fmt.Sprintf("$.rate[%d].windowMs", i), "must be a whole number of milliseconds up to 366 days")
		}
		if r.MaxTurns < 1 || r.MaxTurns > MaxTurnsPerWindow {
			return bad(fmt.Sprintf("$.rate[%d].maxTurns", i), fmt.Sprintf("must be an integer from 1 to %d", MaxTurnsPerWindow))
		}
	}
	return nil
}
