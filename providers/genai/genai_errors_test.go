package genai

import (
	"errors"
	"testing"

	"agent/providers"
)

// TestErrorKinds: a wrong key (400 INVALID_ARGUMENT) is an authentication
// error; an input over the model's limit is "context too long".
func TestErrorKinds(t *testing.T) {
	cases := []struct {
		name string
		body string
		want error
	}{
		{"an invalid key is an authentication error", `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}`, providers.ErrAuthentication},
		{"an input over the limit is context too long", `[{"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}]`, providers.ErrContextTooLong},
		{"another invalid argument is an invalid request", `{"error": {"code": 400, "message": "Invalid JSON payload received.", "status": "INVALID_ARGUMENT"}}`, providers.ErrInvalidRequest},
		{"permission denied is an authentication error", `{"error": {"code": 403, "message": "Permission denied.", "status": "PERMISSION_DENIED"}}`, providers.ErrAuthentication},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, msg := ParseError([]byte(c.body))
			e := providers.APIError(400, code, msg)
			if c.body[0] == '{' && code == "PERMISSION_DENIED" {
				e = providers.APIError(403, code, msg)
			}
			if !errors.Is(e, c.want) {
				t.Errorf("%s: kind %v, want %v", c.body, e.Kind, c.want)
			}
		})
	}
}
