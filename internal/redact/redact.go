// Package redact masks secrets in text meant for people and records:
// credential-shaped names (docs/reference/settings.md, "Templates") and the
// parts of a URL that can carry a key (query values, user information,
// credential-like path segments), so that a key put in a base URL never
// reaches a message, a log or a session transcript.
//
// Imports: standard library only (a pure leaf; README.md, "A walk through
// the code").
package redact

import (
	"net/url"
	"strings"
)

// Mask is shown in place of a value that must not be printed
// (docs/reference/settings.md, "Templates").
const Mask = "***"

// credentialWords are the segments that make a name credential-shaped
// (docs/reference/settings.md, "Templates").
var credentialWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "APIKEY", "AUTH",
	"AUTHORIZATION", "CREDENTIAL", "CREDENTIALS", "COOKIE", "PRIVATE", "DSN",
}

// storeWords name databases and caches: NAME_URL or NAME_URI with one of
// these segments holds a connection string that often embeds a password.
var storeWords = map[string]bool{
	"DATABASE": true, "DB": true, "SQL": true, "POSTGRES": true, "POSTGRESQL": true,
	"PG": true, "MYSQL": true, "MARIADB": true, "MSSQL": true, "SQLSERVER": true,
	"ORACLE": true, "MONGO": true, "MONGODB": true, "REDIS": true, "VALKEY": true,
	"MEMCACHE": true, "MEMCACHED": true, "CACHE": true, "CLICKHOUSE": true,
	"COUCHDB": true, "CASSANDRA": true, "NEO4J": true,
}

// IsCredentialName reports whether an environment variable or header name
// is credential-shaped (docs/reference/settings.md, "Templates"): a segment
// (split at '_', '-' or '.') that is, or ends in, one of TOKEN, SECRET,
// PASSWORD, PASSWD, KEY, APIKEY, AUTH, AUTHORIZATION, CREDENTIAL(S),
// COOKIE, PRIVATE, DSN; or a name ending in _URL/_URI whose other segments
// name a database or cache. PWD and OLDPWD are not secret. Matching ignores
// case.
func IsCredentialName(name string) bool {
	up := strings.ToUpper(name)
	if up == "PWD" || up == "OLDPWD" {
		return false
	}
	segs := segments(up)
	for _, s := range segs {
		for _, w := range credentialWords {
			if strings.HasSuffix(s, w) {
				return true
			}
		}
	}
	if n := len(segs); n >= 2 && (segs[n-1] == "URL" || segs[n-1] == "URI") {
		for _, s := range segs[:n-1] {
			if storeWords[s] {
				return true
			}
		}
	}
	return false
}

func segments(up string) []string {
	return strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
}

// URL returns raw with what may carry a credential masked: every query
// value (names are kept: "?key=***"), a fragment, user information, and
// each credential-like path segment. A path segment is credential-like
// when it is credential-shaped as a name is (IsCredentialName:
// "/key-abc123/", "/token/", "/api_key=abc/"), when it follows a segment made of
// credential words alone ("/key/abc123/": the value of that name), or when
// it looks like a key itself: 32 or more letters, digits, '-' and '_',
// with letters and digits both. Everything else (scheme, host, port, the
// API's own path) stays readable. raw need not parse as a URL: it is read
// as text, so that a URL inside an error message is masked the same way.
func URL(raw string) string {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	var b strings.Builder
	b.Grow(len(raw))
	path := rest
	if i := strings.Index(rest, "://"); i >= 0 {
		authEnd := len(rest)
		if j := strings.IndexByte(rest[i+3:], '/'); j >= 0 {
			authEnd = i + 3 + j
		}
		auth := rest[i+3 : authEnd]
		b.WriteString(rest[:i+3])
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			b.WriteString(Mask + "@")
			auth = auth[at+1:]
		}
		b.WriteString(auth)
		path = rest[authEnd:]
	}
	b.WriteString(maskPath(path))
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(maskQuery(query))
	}
	if hasFrag {
		b.WriteByte('#')
		if frag != "" {
			b.WriteString(Mask)
		}
	}
	return b.String()
}

func maskPath(path string) string {
	segs := strings.Split(path, "/")
	nameOnly := false // the previous segment is a credential name alone
	for i, s := range segs {
		dec, err := url.PathUnescape(s)
		if err != nil {
			dec = s
		}
		next := wordsOnly(dec)
		name, _, _ := strings.Cut(dec, "=") // "/key=abc/": a name and its value
		if s != "" && (nameOnly || IsCredentialName(name) || keyLike(dec)) {
			segs[i] = Mask
		}
		nameOnly = next
	}
	return strings.Join(segs, "/")
}

// wordsOnly reports whether every part of s is a credential word or API
// ("key", "api-key", "access_token" is not: ACCESS is no such word).
func wordsOnly(s string) bool {
	segs := segments(strings.ToUpper(s))
	if len(segs) == 0 {
		return false
	}
	for _, p := range segs {
		ok := p == "API"
		for _, w := range credentialWords {
			ok = ok || p == w
		}
		if !ok {
			return false
		}
	}
	return true
}

// keyLike reports whether s looks like a key or token: long, from the
// base64url alphabet, with letters and digits both.
func keyLike(s string) bool {
	if len(s) < 32 {
		return false
	}
	var letter, digit bool
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return letter && digit
}

func maskQuery(q string) string {
	if q == "" {
		return ""
	}
	params := strings.Split(q, "&")
	for i, p := range params {
		if p == "" {
			continue
		}
		name, _, hasValue := strings.Cut(p, "=")
		if !hasValue {
			params[i] = Mask // "?SECRET": the name may be the key
			continue
		}
		params[i] = name + "=" + Mask
	}
	return strings.Join(params, "&")
}

// Text returns s with every occurrence of the URL raw masked (URL): for a
// message that quotes a request's URL, such as a transport error.
func Text(s, raw string) string {
	if raw == "" || !strings.Contains(s, raw) {
		return s
	}
	return strings.ReplaceAll(s, raw, URL(raw))
}
