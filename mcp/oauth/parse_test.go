package oauth

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

var challengeCases = []struct {
	name    string
	in      string
	ok      bool
	schemes []string
	bearer  Bearer
}{
	{"resource metadata and scope", `Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp", scope="a b"`, true, []string{"Bearer"},
		Bearer{ResourceMetadata: "https://a.example/.well-known/oauth-protected-resource/mcp", Scope: "a b"}},
	{"an error with its scope", `Bearer error="insufficient_scope", scope="files:write", resource_metadata="https://x/y"`, true, []string{"Bearer"},
		Bearer{ResourceMetadata: "https://x/y", Scope: "files:write", Error: "insufficient_scope"}},
	{"scheme and parameter names in any case, a token value", `bearer Error=invalid_token`, true, []string{"bearer"}, Bearer{Error: "invalid_token"}},
	{"a Bearer challenge after another scheme", `Basic realm="x", Bearer scope="s"`, true, []string{"Basic", "Bearer"}, Bearer{Scope: "s"}},
	{"a token68 scheme and a quoted pair", `Negotiate abc==, Bearer realm = "a\"b" , scope="c"`, true, []string{"Negotiate", "Bearer"}, Bearer{Scope: "c"}},
	{"Bearer alone", `Bearer`, true, []string{"Bearer"}, Bearer{}},
	{"empty list elements", `Bearer , , scope="x"`, true, []string{"Bearer"}, Bearer{Scope: "x"}},
	{"a repeated parameter", `Bearer scope="a", scope="b"`, false, nil, Bearer{}},
	{"an unterminated quoted string", `Bearer scope="unterminated`, false, nil, Bearer{}},
	{"a parameter without a value reads as token68", `Bearer scope=`, true, []string{"Bearer"}, Bearer{}}, // token68 by the grammar
	{"no scheme", `=x`, false, nil, Bearer{}},
	{"a NUL in a quoted string", "Bearer scope=\"a\x00\"", false, nil, Bearer{}},
	{"trailing junk", `Bearer scope="a" junk`, false, nil, Bearer{}},
}

func TestParseChallenges(t *testing.T) {
	for _, tc := range challengeCases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ParseChallenges([]string{tc.in})
			if (err == nil) != tc.ok {
				t.Fatalf("%q: err = %v", tc.in, err)
			}
			if !tc.ok {
				return
			}
			var schemes []string
			for _, c := range cs {
				schemes = append(schemes, c.Scheme)
			}
			if strings.Join(schemes, ",") != strings.Join(tc.schemes, ",") {
				t.Errorf("%q: schemes %v", tc.in, schemes)
			}
			if b, _ := BearerChallenge([]string{tc.in}); b != tc.bearer {
				t.Errorf("%q: bearer %+v", tc.in, b)
			}
		})
	}
	if cs, _ := ParseChallenges([]string{`Negotiate abc==`}); cs[0].Token68 != "abc==" {
		t.Error("token68 lost")
	}
	if _, err := ParseChallenges([]string{strings.Repeat("a", 9000)}); err == nil {
		t.Error("an oversized header was accepted")
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, tc := range challengeCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseChallenges([]string{s})
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Scheme == "" || len(c.Params) > maxChallengeParams {
				t.Fatalf("%q: %+v", s, c)
			}
		}
		BearerChallenge([]string{s})
	})
}

var metadataCases = []struct {
	name string
	doc  string
	ok   bool
}{
	{"a complete document with an extension", `{"issuer":"https://as.example","authorization_endpoint":"https://as.example/a","token_endpoint":"https://as.example/t","code_challenge_methods_supported":["S256"],"extra":{"x":[1,2]}}`, true},
	{"a repeated member", `{"issuer":"https://as.example","issuer":"https://evil.example"}`, false},
	{"issuer not a string", `{"issuer":5}`, false},
	{"methods not an array", `{"code_challenge_methods_supported":"S256"}`, false},
	{"a method not a string", `{"code_challenge_methods_supported":[1]}`, false},
	{"a boolean sent as a string", `{"authorization_response_iss_parameter_supported":"true"}`, false},
	{"an array", `[]`, false},
	{"trailing text", `{"issuer":"x"} trailing`, false},
	{"an empty object", `{}`, true},
}

func TestParseServerMetadata(t *testing.T) {
	for _, tc := range metadataCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseServerMetadata([]byte(tc.doc)); (err == nil) != tc.ok {
				t.Errorf("%s: %v", tc.doc, err)
			}
		})
	}
	m, _ := ParseServerMetadata([]byte(metadataCases[0].doc))
	if err := CheckServerMetadata(m, "https://as.example", false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*ServerMetadata){
		func(m *ServerMetadata) { m.Issuer = "https://as.example/" },
		func(m *ServerMetadata) { m.TokenEndpoint = "http://as.example/t" },
		func(m *ServerMetadata) { m.AuthorizationEndpoint = "https://u:p@as.example/a" },
		func(m *ServerMetadata) { m.RegistrationEndpoint = "https://as.example/r#x" },
		func(m *ServerMetadata) { m.CodeChallengeMethodsSupported = nil },
		func(m *ServerMetadata) { m.ResponseTypesSupported = []string{"token"} },
		func(m *ServerMetadata) { m.TokenEndpoint = "" },
	} {
		c := *m
		bad(&c)
		if err := CheckServerMetadata(&c, "https://as.example", false); !errors.Is(err, ErrRefused) {
			t.Errorf("%+v accepted", c)
		}
	}
	// Loopback http only with the interop switch.
	c := *m
	c.Issuer, c.TokenEndpoint, c.AuthorizationEndpoint = "http://127.0.0.1:9", "http://127.0.0.1:9/t", "http://localhost:9/a"
	if CheckServerMetadata(&c, c.Issuer, false) == nil || CheckServerMetadata(&c, c.Issuer, true) != nil {
		t.Error("insecure loopback switch")
	}
	c.TokenEndpoint = "http://10.0.0.1/t"
	if CheckServerMetadata(&c, c.Issuer, true) == nil {
		t.Error("http to a non-loopback host")
	}
}

func TestParseResourceMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"a complete document", `{"resource":"https://r.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["a"],"bearer_methods_supported":["header"]}`, true},
		{"no resource", `{"authorization_servers":["https://as.example"]}`, false},
		{"a duplicate member", `{"resource":"https://r","resource":"https://s"}`, false},
		{"authorization servers that are not a list", `{"resource":"https://r","authorization_servers":"https://as"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResourceMetadata([]byte(tc.doc))
			if (err == nil) != tc.ok {
				t.Errorf("%s: %v", tc.doc, err)
			}
		})
	}
}

func TestResourceNames(t *testing.T) {
	su, _ := url.Parse("https://API.example:443/v1/mcp")
	for _, tc := range []struct {
		name string
		res  string
		ok   bool
	}{
		{"the server's own resource", "https://api.example/v1/mcp", true},
		{"with a trailing slash", "https://api.example/v1/mcp/", true},
		{"a parent path", "https://api.example/v1", true},
		{"the origin", "https://api.example", true},
		{"the origin with a slash", "https://api.example/", true},
		{"a prefix that is not a whole segment", "https://api.example/v", false},
		{"a longer last segment", "https://api.example/v1/mcp2", false},
		{"another port", "https://api.example:8443/v1/mcp", false},
		{"another scheme", "http://api.example/v1/mcp", false},
		{"another host", "https://other.example/v1/mcp", false},
		{"a fragment", "https://api.example/v1/mcp#f", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resourceNames(tc.res, su); got != tc.ok {
				t.Errorf("%s: %v", tc.res, got)
			}
		})
	}
}

func FuzzParseMetadata(f *testing.F) {
	for _, tc := range metadataCases {
		f.Add([]byte(tc.doc))
	}
	f.Add([]byte(`{"resource":"https://r.example/mcp","authorization_servers":["https://as.example"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ParseServerMetadata(b); err == nil {
			CheckServerMetadata(m, m.Issuer, false)
		}
		ParseResourceMetadata(b)
	})
}

var tokenCases = []struct {
	name   string
	status int
	ct     string
	body   string
	ok     bool
	code   string
}{
	{"a complete answer", 200, "application/json", `{"access_token":"AT1","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x"}`, true, ""},
	{"a charset, lower-case bearer and a fractional lifetime", 200, "application/json; charset=utf-8", `{"access_token":"AT1","token_type":"bearer","expires_in":1.5e3}`, true, ""},
	{"the access token alone", 200, "application/json", `{"access_token":"AT1"}`, true, ""},
	{"another token type", 200, "application/json", `{"access_token":"AT1","token_type":"DPoP"}`, false, ""},
	{"no access token", 200, "application/json", `{"token_type":"Bearer"}`, false, ""},
	{"a repeated access token", 200, "application/json", `{"access_token":"AT1","access_token":"b"}`, false, ""},
	{"a negative lifetime", 200, "application/json", `{"access_token":"AT1","expires_in":-1}`, false, ""},
	{"a lifetime as a string", 200, "application/json", `{"access_token":"AT1","expires_in":"3600"}`, false, ""},
	{"not JSON by its content type", 200, "text/html", `{"access_token":"AT1"}`, false, ""},
	{"an error with status 200", 200, "application/json", `{"error":"invalid_grant"}`, false, "invalid_grant"},
	{"an error status with a control character in the description", 400, "application/json", `{"error":"invalid_grant","error_description":"bad\u001b[2J"}`, false, "invalid_grant"},
	{"a server error in plain text", 500, "text/plain", `oops`, false, ""},
}

func TestParseTokenResponse(t *testing.T) {
	for _, tc := range tokenCases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseTokenResponse(tc.status, tc.ct, []byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("%s: %v", tc.body, err)
			}
			var te *TokenError
			if tc.code != "" && (!errors.As(err, &te) || te.Code != tc.code) {
				t.Errorf("%s: %v", tc.body, err)
			}
			if err != nil && strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("control character in %q", err)
			}
			if tr != nil && strings.Contains(tr.String(), tr.AccessToken) {
				t.Error("String shows the token")
			}
		})
	}
}

func FuzzParseTokenResponse(f *testing.F) {
	for _, tc := range tokenCases {
		f.Add(tc.status, tc.ct, []byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, status int, ct string, b []byte) {
		tr, err := ParseTokenResponse(status, ct, b)
		if err == nil && (tr.AccessToken == "" || tr.ExpiresIn < 0 || tr.ExpiresIn > maxExpiresIn) {
			t.Fatalf("%+v", tr)
		}
		ParseRegistrationResponse(status, b)
	})
}

func TestParseRegistrationResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		ok     bool
		method string
	}{
		{"a public client", 201, `{"client_id":"c","token_endpoint_auth_method":"none"}`, true, AuthNone},
		{"a secret without a method means basic", 201, `{"client_id":"c","client_secret":"s"}`, true, AuthSecretBasic},
		{"client_secret_post with its secret", 200, `{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_post"}`, true, AuthSecretPost},
		{"a secret method without a secret", 201, `{"client_id":"c","token_endpoint_auth_method":"client_secret_basic"}`, false, ""},
		{"an unsupported method", 201, `{"client_id":"c","token_endpoint_auth_method":"private_key_jwt"}`, false, ""},
		{"no client_id", 201, `{"client_secret":"s"}`, false, ""},
		{"an error status", 400, `{"error":"invalid_redirect_uri"}`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRegistrationResponse(tc.status, []byte(tc.body))
			if (err == nil) != tc.ok || tc.ok && r.AuthMethod != tc.method {
				t.Errorf("%s: %v %v", tc.body, r, err)
			}
			if strings.Contains(r.String(), "s\"") {
				t.Error("String shows the secret")
			}
		})
	}
}

var callbackCases = []struct {
	name string
	q    string
	ok   bool
}{
	{"code and state", "code=abc&state=xyz", true},
	{"with the issuer", "code=abc&state=xyz&iss=https%3A%2F%2Fas.example", true},
	{"an error", "error=access_denied&state=xyz", true},
	{"no code and no error", "state=xyz", false},
	{"a repeated code", "code=a&code=b&state=xyz", false},
	{"a repeated state", "code=a&state=x&state=y", false},
	{"a bad escape", "code=a&state=%zz", false},
	{"a semicolon separator", "code=a;state=b", false},
}

func TestParseCallback(t *testing.T) {
	for _, tc := range callbackCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseCallback(tc.q); (err == nil) != tc.ok {
				t.Errorf("%s: %v", tc.q, err)
			}
		})
	}
	if _, err := ParseCallback(strings.Repeat("a", maxCallbackURL+1)); err == nil {
		t.Error("oversized callback accepted")
	}
	redirect := "http://127.0.0.1:5555/callback"
	for _, tc := range []struct {
		name   string
		pasted string
		ok     bool
	}{
		{"the pasted redirect with spaces around it", "  http://127.0.0.1:5555/callback?code=a&state=b \n", true},
		{"a pasted address on another port", "http://127.0.0.1:5556/callback?code=a&state=b", false},
		{"a pasted address with another host name", "http://localhost:5555/callback?code=a&state=b", false},
		{"a pasted address with another scheme", "https://127.0.0.1:5555/callback?code=a&state=b", false},
		{"a pasted address with another path", "http://127.0.0.1:5555/other?code=a&state=b", false},
		{"a pasted query alone", "code=a&state=b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParsePastedRedirect(tc.pasted, redirect); (err == nil) != tc.ok {
				t.Errorf("%q: %v", tc.pasted, err)
			}
		})
	}
	// checkCallback
	good := Callback{Code: "c", State: "s", Iss: "https://as"}
	if err := checkCallback(good, "s", "https://as", true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    Callback
		req  bool
	}{
		{"a callback with another state", Callback{Code: "c", State: "t", Iss: "https://as"}, false},
		{"a callback without the iss the server requires", Callback{Code: "c", State: "s"}, true},
		{"a callback from another issuer", Callback{Code: "c", State: "s", Iss: "https://evil"}, false},
		{"a callback with an error", Callback{Error: "access_denied", State: "s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkCallback(tc.c, "s", "https://as", tc.req); !errors.Is(err, ErrRefused) {
				t.Errorf("%+v accepted", tc.c)
			}
		})
	}
	if strings.Contains(good.String(), "c\"") {
		t.Error("String shows the code")
	}
}

func FuzzParseCallback(f *testing.F) {
	for _, tc := range callbackCases {
		f.Add(tc.q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, err := ParseCallback(q)
		if err == nil && c.Code == "" && c.Error == "" {
			t.Fatalf("%q", q)
		}
		ParsePastedRedirect("http://127.0.0.1:1/callback?"+q, "http://127.0.0.1:1/callback")
	})
}
