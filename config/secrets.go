package config

import "agent/internal/redact"

// IsCredentialName reports whether an environment variable or header name
// is credential-shaped (docs/reference/settings.md, "Templates"): a segment
// (split at '_', '-' or '.') that is, or ends in, one of TOKEN, SECRET,
// PASSWORD, PASSWD, KEY, APIKEY, AUTH, AUTHORIZATION, CREDENTIAL(S),
// COOKIE, PRIVATE, DSN; or a name ending in _URL/_URI whose other segments
// name a database or cache. PWD and OLDPWD are not secret. Matching ignores
// case. The rule lives in internal/redact, which the providers share to
// mask URLs.
func IsCredentialName(name string) bool { return redact.IsCredentialName(name) }

// Mask is shown in place of a value that must not be printed
// (docs/reference/settings.md, "Templates").
const Mask = redact.Mask
