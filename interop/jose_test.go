package interop

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"agent/internal/jose"
)

// TestJoseInterop verifies with internal/jose the access tokens that the npm
// jose library mints (interop/jose/mint.mjs): RS256, ES256 and EdDSA tokens
// it must accept, and bad ones it must refuse for the stated reason, all
// against the JWK Set the script exported.
func TestJoseInterop(t *testing.T) {
	requirePeer(t, "jose")
	node := nodeBinary(t, 20)
	const (
		issuer   = "https://issuer.example/tenant"
		audience = "https://agent.example/mcp"
		subject  = "alice"
		scope    = "mcp"
	)
	now := time.Now().Truncate(time.Second)
	in, err := json.Marshal(map[string]any{"issuer": issuer, "audience": audience, "subject": subject, "scope": scope, "now": now.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name  string `json:"name"`
			Token string `json:"token"`
			Want  string `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(runNode(t, node, "jose/mint.mjs", string(in)), &out); err != nil {
		t.Fatalf("script output: %v", err)
	}
	set, err := jose.ParseJWKS(out.JWKS)
	if err != nil {
		t.Fatal(err)
	}
	if n, skipped := len(set.Keys()), set.Skipped(); n != 3 || len(skipped) != 0 {
		t.Fatalf("%d usable keys, want 3; skipped: %v", n, skipped)
	}
	v, err := jose.NewVerifier(jose.Options{
		Issuer:    issuer,
		Audience:  audience,
		Scopes:    []string{scope},
		Subjects:  []string{subject},
		Keys:      set,
		RequireID: true,
		Now:       func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	accepted := map[jose.Algorithm]int{}
	for _, tc := range out.Cases {
		c, err := v.Verify(t.Context(), tc.Token)
		switch {
		case tc.Want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.Name, err)
		case tc.Want == "":
			accepted[c.Algorithm]++
			if c.Subject != subject || c.Issuer != issuer || !c.HasScope(scope) || c.ID == "" {
				t.Errorf("%s: claims %+v", tc.Name, c)
			}
		case err == nil:
			t.Errorf("%s: accepted, want %q", tc.Name, tc.Want)
		case jose.ReasonOf(err).String() != tc.Want:
			t.Errorf("%s: got %v, want %q", tc.Name, err, tc.Want)
		default:
			var e *jose.Error
			if !errors.As(err, &e) {
				t.Errorf("%s: %v is not a *jose.Error", tc.Name, err)
			}
		}
	}
	for _, alg := range jose.Algorithms() {
		if accepted[alg] == 0 {
			t.Errorf("no %s token accepted", alg)
		}
	}
	t.Logf("%d tokens from npm jose checked; accepted per algorithm: %v", len(out.Cases), accepted)
}
