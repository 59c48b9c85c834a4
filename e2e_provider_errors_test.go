package main

import (
	"strings"
	"testing"
)

// An error the genai API sends after the stream began comes as a bare JSON
// object (no "data:"), here over several lines; print mode reports its
// status and message and exits 1. Nothing had reached the caller, so a
// 503 UNAVAILABLE is retried first (decisions.md §5).
func TestE2EGenaiBareStreamErrorIsReported(t *testing.T) {
	exhausted := "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Partial\"}]}}]}\n\n" +
		"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n"
	unavailable := `{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}` + "\n"
	api := newFakeAPI(t, unavailable, exhausted)
	s := trustedSandbox(t, `{"providers": {"genai": {"baseURL": "`+api.srv.URL+`", "model": "gemini-e2e"}}}`)
	s.Env = append(s.Env, "GENAI_API_KEY=g-e2e")
	r := s.run("", "-p", "--provider", "genai", "hi")
	if r.Code != 1 || !strings.Contains(r.Stderr, "RESOURCE_EXHAUSTED") || !strings.Contains(r.Stderr, "Resource has been exhausted (e.g. check quota).") ||
		strings.Contains(r.Stderr, "without a finish reason") {
		t.Fatalf("%+v", r)
	}
	if n := len(api.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the 503 before any text retried once)", n)
	}
}
