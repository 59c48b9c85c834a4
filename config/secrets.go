package config

import "strings"

// credentialWords are the segments that make a name credential-shaped
// (decisions.md §2).
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
// is credential-shaped (decisions.md §2): a segment (split at '_', '-' or
// '.') that is, or ends in, one of TOKEN, SECRET, PASSWORD, PASSWD, KEY,
// APIKEY, AUTH, AUTHORIZATION, CREDENTIAL(S), COOKIE, PRIVATE, DSN; or a
// name ending in _URL/_URI whose other segments name a database or cache.
// PWD and OLDPWD are not secret. Matching ignores case.
func IsCredentialName(name string) bool {
	up := strings.ToUpper(name)
	if up == "PWD" || up == "OLDPWD" {
		return false
	}
	segs := strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
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

// Mask is shown in place of a value that must not be printed (§5.4).
const Mask = "***"
