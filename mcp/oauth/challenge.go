package oauth

import (
	"errors"
	"strings"
)

// Challenge is one authentication challenge of a WWW-Authenticate header
// (RFC 9110 §11.6.1, §11.3): a scheme and its auth-params. Parameter names
// are lower-cased (they are case-insensitive); a token68 challenge keeps
// its value in Token68.
type Challenge struct {
	Scheme  string
	Params  map[string]string
	Token68 string
}

// Bearer is what a Bearer challenge tells a client (RFC 6750 §3, RFC 9728
// §5.1, MCP authorization "Protected Resource Metadata Discovery" and
// "Scope Selection Strategy").
type Bearer struct {
	ResourceMetadata string // resource_metadata: URL of the protected-resource metadata
	Scope            string // scope the request needs, space-separated
	Error            string // error code, e.g. invalid_token or insufficient_scope
}

// Limits on a challenge header: a server's header is outside input.
const (
	maxChallengeHeader = 8 << 10
	maxChallenges      = 16
	maxChallengeParams = 32
)

// ErrChallengeSyntax is returned for a WWW-Authenticate value that does
// not follow RFC 9110's challenge grammar.
var ErrChallengeSyntax = errors.New("malformed WWW-Authenticate challenge")

// ParseChallenges parses WWW-Authenticate header values (one header may
// hold several challenges, and a response may carry several headers).
// It is pure and bounded: values over 8 KiB in total, more than 16
// challenges or 32 parameters per challenge are refused. A duplicate
// parameter in one challenge is refused (RFC 9110 §11.2: "each parameter
// name MUST only occur once per challenge").
func ParseChallenges(values []string) ([]Challenge, error) {
	total := 0
	var out []Challenge
	for _, v := range values {
		total += len(v)
		if total > maxChallengeHeader {
			return nil, errors.New("WWW-Authenticate header too long")
		}
		cs, err := parseChallengeList(v)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
		if len(out) > maxChallenges {
			return nil, errors.New("too many WWW-Authenticate challenges")
		}
	}
	return out, nil
}

// BearerChallenge returns the first Bearer challenge among values, and
// whether there was one. A malformed header counts as none: the client
// then falls back to the well-known locations.
func BearerChallenge(values []string) (Bearer, bool) {
	cs, err := ParseChallenges(values)
	if err != nil {
		return Bearer{}, false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return Bearer{ResourceMetadata: c.Params["resource_metadata"], Scope: c.Params["scope"], Error: c.Params["error"]}, true
		}
	}
	return Bearer{}, false
}

type challengeLexer struct {
	s string
	i int
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

func (l *challengeLexer) ows() {
	for l.i < len(l.s) && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
}

func (l *challengeLexer) token() string {
	start := l.i
	for l.i < len(l.s) && isTchar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

func (l *challengeLexer) peek() byte {
	if l.i < len(l.s) {
		return l.s[l.i]
	}
	return 0
}

// quoted reads a quoted-string (RFC 9110 §5.6.4) after its opening quote.
func (l *challengeLexer) quoted() (string, error) {
	var b strings.Builder
	l.i++ // opening quote
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '"':
			l.i++
			return b.String(), nil
		case c == '\\':
			if l.i+1 >= len(l.s) {
				return "", ErrChallengeSyntax
			}
			q := l.s[l.i+1]
			if q < 0x20 && q != '\t' || q == 0x7f {
				return "", ErrChallengeSyntax
			}
			b.WriteByte(q)
			l.i += 2
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", ErrChallengeSyntax
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	return "", ErrChallengeSyntax
}

// parseChallengeList parses `#challenge` of RFC 9110 §11.6.1:
// challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ].
// Commas separate both challenges and parameters; a parameter is told
// from a new challenge by the '=' after its name.
func parseChallengeList(s string) ([]Challenge, error) {
	l := &challengeLexer{s: s}
	var out []Challenge
	var cur *Challenge
	for {
		l.ows()
		for l.peek() == ',' { // empty list elements are allowed
			l.i++
			l.ows()
		}
		if l.i >= len(l.s) {
			break
		}
		name := l.token()
		if name == "" {
			return nil, ErrChallengeSyntax
		}
		save := l.i
		l.ows()
		if cur != nil && l.peek() == '=' && !(l.i+1 < len(l.s) && l.s[l.i+1] == '=') {
			// An auth-param of the current challenge.
			l.i++
			l.ows()
			var val string
			if l.peek() == '"' {
				v, err := l.quoted()
				if err != nil {
					return nil, err
				}
				val = v
			} else {
				val = l.token()
				if val == "" {
					return nil, ErrChallengeSyntax
				}
			}
			key := strings.ToLower(name)
			if _, dup := cur.Params[key]; dup {
				return nil, ErrChallengeSyntax
			}
			if len(cur.Params) >= maxChallengeParams {
				return nil, ErrChallengeSyntax
			}
			cur.Params[key] = val
		} else {
			// A new challenge: the scheme, then optionally a token68 or
			// the first parameter.
			l.i = save
			out = append(out, Challenge{Scheme: name, Params: map[string]string{}})
			cur = &out[len(out)-1]
			if l.peek() == ' ' || l.peek() == '\t' {
				l.ows()
				start := l.i
				for l.i < len(l.s) && isToken68Char(l.s[l.i]) {
					l.i++
				}
				for l.i < len(l.s) && l.s[l.i] == '=' {
					l.i++
				}
				end := l.i
				l.ows()
				if end > start && l.s[start] != '=' && (l.i >= len(l.s) || l.peek() == ',') {
					cur.Token68 = l.s[start:end]
				} else {
					l.i = start // an auth-param list follows
					continue
				}
			}
		}
		l.ows()
		if l.i < len(l.s) {
			if l.peek() != ',' {
				return nil, ErrChallengeSyntax
			}
			l.i++
		}
	}
	return out, nil
}
