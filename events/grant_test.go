package events

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"agent/internal/jose"
)

// secret stands for a value that must never reach a message.
const secret = "SeCrEtVaLuE"

// grantDoc is a valid grant file as a map, changed by changes (a nil value
// deletes a member).
func grantDoc(changes map[string]any) string {
	m := map[string]any{
		"grantId":  "ci",
		"issuer":   "https://issuer.example/tenant",
		"resource": "https://agent.example/hooks/events/ci",
		"subject":  "ci-bot",
		"scopes":   []string{"events:write"},
	}
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return string(mustJSON(m))
}

func TestParseGrantValid(t *testing.T) {
	g, err := ParseGrant([]byte(grantDoc(nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{ID: "ci", Issuer: "https://issuer.example/tenant", Resource: "https://agent.example/hooks/events/ci",
		Subject: "ci-bot", Scopes: []string{"events:write"}, Algorithms: jose.Algorithms()}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got %+v\nwant %+v", g, want)
	}
	full := grantDoc(map[string]any{
		"subject":    nil,
		"client":     "client-7",
		"scopes":     []string{"a", "b:c"},
		"algorithms": []string{"EdDSA"},
		"rate":       []map[string]any{{"windowMs": 60000, "maxTurns": 5}, {"windowMs": 3.6e6, "maxTurns": 50}},
		"resource":   "https://agent.example:8443/a%20b/events/ci",
	})
	g, err = ParseGrant([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if g.Client != "client-7" || g.Subject != "" || !reflect.DeepEqual(g.Algorithms, []jose.Algorithm{jose.EdDSA}) ||
		!reflect.DeepEqual(g.Rate, []Rate{{time.Minute, 5}, {time.Hour, 50}}) {
		t.Fatalf("got %+v", g)
	}
	if kind, name := g.Principal(); kind != "client" || name != "client-7" {
		t.Fatalf("Principal() = %s %s", kind, name)
	}
}

// grantCases are files each breaking one rule of docs/reference/events.md,
// "Grant files", with the field the error must name.
var grantCases = []struct {
	name, doc, field string
}{
	{"not an object", `["x"]`, "$"},
	{"empty file", ``, "$"},
	{"not JSON", `{"grantId": ` + secret + `}`, "$"},
	{"duplicate key", `{"grantId":"ci","grantId":"ci"}`, "$"},
	{"trailing data", grantDoc(nil) + `{}`, "$"},
	{"unknown field", grantDoc(map[string]any{"clientSecret": secret}), "$.clientSecret"},
	{"case variant of a field", grantDoc(map[string]any{"GrantId": "ci"}), "$.GrantId"},
	{"grantId missing", grantDoc(map[string]any{"grantId": nil}), "$.grantId"},
	{"grantId not a string", grantDoc(map[string]any{"grantId": 7}), "$.grantId"},
	{"grantId empty", grantDoc(map[string]any{"grantId": ""}), "$.grantId"},
	{"grantId bad character", grantDoc(map[string]any{"grantId": "c.i" + secret}), "$.grantId"},
	{"grantId too long", grantDoc(map[string]any{"grantId": strings.Repeat("a", 65)}), "$.grantId"},
	{"issuer missing", grantDoc(map[string]any{"issuer": nil}), "$.issuer"},
	{"issuer http", grantDoc(map[string]any{"issuer": "http://issuer.example/" + secret}), "$.issuer"},
	{"issuer user info", grantDoc(map[string]any{"issuer": "https://" + secret + "@issuer.example"}), "$.issuer"},
	{"issuer fragment", grantDoc(map[string]any{"issuer": "https://issuer.example/#" + secret}), "$.issuer"},
	{"issuer empty fragment", grantDoc(map[string]any{"issuer": "https://issuer.example/#"}), "$.issuer"},
	{"issuer query", grantDoc(map[string]any{"issuer": "https://issuer.example/?k=" + secret}), "$.issuer"},
	{"issuer no host", grantDoc(map[string]any{"issuer": "https:///x"}), "$.issuer"},
	{"issuer not a URL", grantDoc(map[string]any{"issuer": "https://issuer.example/%zz" + secret}), "$.issuer"},
	{"issuer opaque", grantDoc(map[string]any{"issuer": "https:" + secret}), "$.issuer"},
	{"resource missing", grantDoc(map[string]any{"resource": nil}), "$.resource"},
	{"resource http", grantDoc(map[string]any{"resource": "http://agent.example/events/ci"}), "$.resource"},
	{"resource query", grantDoc(map[string]any{"resource": "https://agent.example/events/ci?k=" + secret}), "$.resource"},
	{"resource empty query", grantDoc(map[string]any{"resource": "https://agent.example/events/ci?"}), "$.resource"},
	{"resource fragment", grantDoc(map[string]any{"resource": "https://agent.example/events/ci#" + secret}), "$.resource"},
	{"resource user info", grantDoc(map[string]any{"resource": "https://u:" + secret + "@agent.example/events/ci"}), "$.resource"},
	{"resource path of another grant", grantDoc(map[string]any{"resource": "https://agent.example/events/other"}), "$.resource"},
	{"resource path with a trailing slash", grantDoc(map[string]any{"resource": "https://agent.example/events/ci/"}), "$.resource"},
	{"resource path without events", grantDoc(map[string]any{"resource": "https://agent.example/hooks/ci"}), "$.resource"},
	{"resource path suffix only", grantDoc(map[string]any{"resource": "https://agent.example/xevents/ci"}), "$.resource"},
	{"subject and client", grantDoc(map[string]any{"client": "c"}), "$.subject, $.client"},
	{"neither subject nor client", grantDoc(map[string]any{"subject": nil}), "$.subject, $.client"},
	{"subject empty", grantDoc(map[string]any{"subject": ""}), "$.subject"},
	{"subject control character", grantDoc(map[string]any{"subject": "a\x1bb"}), "$.subject"},
	{"client not a string", grantDoc(map[string]any{"subject": nil, "client": []string{secret}}), "$.client"},
	{"scopes missing", grantDoc(map[string]any{"scopes": nil}), "$.scopes"},
	{"scopes empty", grantDoc(map[string]any{"scopes": []string{}}), "$.scopes"},
	{"scopes not an array", grantDoc(map[string]any{"scopes": "events:write"}), "$.scopes"},
	{"scopes 17 entries", grantDoc(map[string]any{"scopes": strings.Split("a b c d e f g h i j k l m n o p q", " ")}), "$.scopes"},
	{"scope with a space", grantDoc(map[string]any{"scopes": []string{"a " + secret}}), "$.scopes[0]"},
	{"scope empty", grantDoc(map[string]any{"scopes": []string{"a", ""}}), "$.scopes[1]"},
	{"scope repeated", grantDoc(map[string]any{"scopes": []string{"a", "a"}}), "$.scopes[1]"},
	{"scope not a string", grantDoc(map[string]any{"scopes": []any{"a", 1}}), "$.scopes[1]"},
	{"algorithms empty", grantDoc(map[string]any{"algorithms": []string{}}), "$.algorithms"},
	{"algorithms not an array", grantDoc(map[string]any{"algorithms": "ES256"}), "$.algorithms"},
	{"algorithm HS256", grantDoc(map[string]any{"algorithms": []string{"ES256", "HS256"}}), "$.algorithms[1]"},
	{"algorithm none", grantDoc(map[string]any{"algorithms": []string{"none"}}), "$.algorithms[0]"},
	{"algorithm wrong case", grantDoc(map[string]any{"algorithms": []string{"es256"}}), "$.algorithms[0]"},
	{"algorithm repeated", grantDoc(map[string]any{"algorithms": []string{"ES256", "ES256"}}), "$.algorithms[1]"},
	{"rate empty", grantDoc(map[string]any{"rate": []any{}}), "$.rate"},
	{"rate not an array", grantDoc(map[string]any{"rate": map[string]any{"windowMs": 1, "maxTurns": 1}}), "$.rate"},
	{"rate 9 windows", grantDoc(map[string]any{"rate": func() []any {
		var w []any
		for i := range 9 {
			w = append(w, map[string]any{"windowMs": 1000 * (i + 1), "maxTurns": 1})
		}
		return w
	}()}), "$.rate"},
	{"rate window not an object", grantDoc(map[string]any{"rate": []any{60000}}), "$.rate[0]"},
	{"rate windowMs zero", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 0, "maxTurns": 1}}}), "$.rate[0].windowMs"},
	{"rate windowMs negative", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": -5, "maxTurns": 1}}}), "$.rate[0].windowMs"},
	{"rate windowMs fraction", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1.5, "maxTurns": 1}}}), "$.rate[0].windowMs"},
	{"rate windowMs string", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": "60000", "maxTurns": 1}}}), "$.rate[0].windowMs"},
	{"rate windowMs huge", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1e300, "maxTurns": 1}}}), "$.rate[0].windowMs"},
	{"rate maxTurns zero", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1, "maxTurns": 0}}}), "$.rate[0].maxTurns"},
	{"rate maxTurns too many", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1, "maxTurns": 100001}}}), "$.rate[0].maxTurns"},
	{"rate maxTurns missing", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1}}}), "$.rate[0].maxTurns"},
	{"rate unknown member", grantDoc(map[string]any{"rate": []any{map[string]any{"windowMs": 1, "maxTurns": 1, "burst": 2}}}), "$.rate[0].burst"},
	{"over 16 KiB", grantDoc(map[string]any{"subject": strings.Repeat("a", 17<<10)}), "$"},
}

func TestParseGrantRefusals(t *testing.T) {
	for _, tc := range grantCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGrant([]byte(tc.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			var ge *GrantError
			if !errors.As(err, &ge) {
				t.Fatalf("%v is not a *GrantError", err)
			}
			if !hasField(err, tc.field) {
				t.Errorf("error %q does not name field %s", err, tc.field)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "ci-bot") {
				t.Errorf("error %q repeats a value", err)
			}
		})
	}
}

// hasField reports whether one of the joined errors is about field.
func hasField(err error, field string) bool {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, e := range list {
		var ge *GrantError
		if errors.As(e, &ge) && ge.Field == field {
			return true
		}
	}
	return false
}

// TestParseGrantReportsEveryProblem: one pass names each bad field.
func TestParseGrantReportsEveryProblem(t *testing.T) {
	doc := grantDoc(map[string]any{"grantId": "a b", "issuer": "http://x", "scopes": []string{}, "extra": 1})
	_, err := ParseGrant([]byte(doc))
	for _, f := range []string{"$.grantId", "$.issuer", "$.scopes", "$.extra"} {
		if !hasField(err, f) {
			t.Errorf("%q does not name %s", err, f)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadGrants(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", grantDoc(nil))
	b := writeFile(t, dir, "b.json", grantDoc(map[string]any{"grantId": "b", "resource": "https://agent.example/events/b"}))
	grants, err := LoadGrants([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 2 || grants[0].ID != "ci" || grants[1].ID != "b" || grants[0].File != a {
		t.Fatalf("got %+v", grants)
	}

	bad := writeFile(t, dir, "bad.json", grantDoc(map[string]any{"resource": "https://agent.example/events/x?t=" + secret}))
	big := writeFile(t, dir, "big.json", strings.Repeat(" ", MaxGrantFileBytes+1))
	dup := writeFile(t, dir, "dup.json", grantDoc(nil))
	for _, tc := range []struct {
		name  string
		paths []string
		file  string // named by the error
		field string
	}{
		{"missing file", []string{a, filepath.Join(dir, "none.json")}, filepath.Join(dir, "none.json"), "$"},
		{"directory", []string{dir}, dir, "$"},
		{"over 16 KiB", []string{big}, big, "$"},
		{"invalid field", []string{a, bad}, bad, "$.resource"},
		{"duplicate grant id", []string{a, dup}, dup, "$.grantId"},
		{"more than 16 grants", func() []string {
			var p []string
			for i := range 17 {
				id := fmt.Sprintf("g%d", i)
				p = append(p, writeFile(t, dir, id+".json", grantDoc(map[string]any{"grantId": id, "resource": "https://agent.example/events/" + id})))
			}
			return p
		}(), "--external-event-grant: at most 16 grants", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := LoadGrants(tc.paths)
			if err == nil || g != nil {
				t.Fatalf("accepted: %v", g)
			}
			if tc.field != "" && !hasField(err, tc.field) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name file %q and field %s", err, tc.file, tc.field)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q repeats a value", err)
			}
		})
	}
}

// TestNewChecksGrants: grants built in code meet the file rules.
func TestNewChecksGrants(t *testing.T) {
	mod := func(f func(g *Grant)) Grant { g := testGrant(); f(&g); return g }
	for name, g := range map[string]Grant{
		"bad id":            mod(func(g *Grant) { g.ID = "a/b" }),
		"resource mismatch": mod(func(g *Grant) { g.ID = "other" }),
		"http issuer":       mod(func(g *Grant) { g.Issuer = "http://issuer.example" }),
		"both principals":   mod(func(g *Grant) { g.Client = "c" }),
		"no principal":      mod(func(g *Grant) { g.Subject = "" }),
		"no scopes":         mod(func(g *Grant) { g.Scopes = nil }),
		"HS256":             mod(func(g *Grant) { g.Algorithms = []jose.Algorithm{"HS256"} }),
		"zero window":       mod(func(g *Grant) { g.Rate = []Rate{{0, 1}} }),
		"zero turns":        mod(func(g *Grant) { g.Rate = []Rate{{time.Second, 0}} }),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(Options{Grants: []Grant{g}, Target: &recorder{}}); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := New(Options{Grants: []Grant{testGrant(), testGrant()}, Target: &recorder{}}); err == nil {
		t.Fatal("two grants with one id accepted")
	}
	if _, err := New(Options{Grants: []Grant{testGrant()}}); err == nil {
		t.Fatal("accepted without a Target")
	}
	if _, err := New(Options{Target: &recorder{}}); err == nil {
		t.Fatal("accepted without grants")
	}
	if _, err := New(Options{Grants: []Grant{testGrant()}, Target: &recorder{}, Port: 70000}); err == nil {
		t.Fatal("accepted port 70000")
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies([]string{"10.0.0.1", "::1", "::ffff:192.0.2.1"})
	if err != nil || len(got) != 3 || got[2].String() != "192.0.2.1" {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"10.0.0.0/8", "proxy.example", "", "fe80::1%eth0", "10.0.0.1:80"} {
		if _, err := ParseTrustedProxies([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
