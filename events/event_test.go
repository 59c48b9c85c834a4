package events

import (
	"errors"
	"strings"
	"testing"
)

var eventCases = []struct {
	name, body string
	ok         bool
	want       Event
}{
	{"full", goodBody, true, Event{ConversationID: "conv-1", Content: "build 42 failed", ClaimedName: "CI"}},
	{"no claimedName", `{"kind":"message","conversationId":"c","content":"x"}`, true, Event{ConversationID: "c", Content: "x"}},
	{"empty claimedName", `{"kind":"message","conversationId":"c","content":"x","claimedName":""}`, true, Event{ConversationID: "c", Content: "x"}},
	{"members in any order, white space", " {\"content\" : \"x\",\n\"claimedName\":\"\\u00e9\", \"conversationId\":\"c\",\"kind\":\"message\"}\n", true,
		Event{ConversationID: "c", Content: "x", ClaimedName: "é"}},
	{"empty", ``, false, Event{}},
	{"not an object", `["message"]`, false, Event{}},
	{"null", `null`, false, Event{}},
	{"kind missing", `{"conversationId":"c","content":"x"}`, false, Event{}},
	{"kind other", `{"kind":"reaction","conversationId":"c","content":"x"}`, false, Event{}},
	{"kind wrong case", `{"kind":"Message","conversationId":"c","content":"x"}`, false, Event{}},
	{"conversationId missing", `{"kind":"message","content":"x"}`, false, Event{}},
	{"conversationId empty", `{"kind":"message","conversationId":"","content":"x"}`, false, Event{}},
	{"conversationId number", `{"kind":"message","conversationId":7,"content":"x"}`, false, Event{}},
	{"content missing", `{"kind":"message","conversationId":"c"}`, false, Event{}},
	{"content empty", `{"kind":"message","conversationId":"c","content":""}`, false, Event{}},
	{"content object", `{"kind":"message","conversationId":"c","content":{"text":"x"}}`, false, Event{}},
	{"claimedName null", `{"kind":"message","conversationId":"c","content":"x","claimedName":null}`, false, Event{}},
	{"unknown member", `{"kind":"message","conversationId":"c","content":"x","from":"admin"}`, false, Event{}},
	{"case variant", `{"kind":"message","conversationId":"c","content":"x","Content":"y"}`, false, Event{}},
	{"duplicate key", `{"kind":"message","conversationId":"c","content":"x","content":"y"}`, false, Event{}},
	{"trailing data", `{"kind":"message","conversationId":"c","content":"x"} {}`, false, Event{}},
	{"invalid UTF-8", "{\"kind\":\"message\",\"conversationId\":\"c\",\"content\":\"\xff\"}", false, Event{}},
	{"lone surrogate", `{"kind":"message","conversationId":"c","content":"\ud800"}`, false, Event{}},
	{"over 16 KiB", `{"kind":"message","conversationId":"c","content":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, false, Event{}},
}

func TestParseEvent(t *testing.T) {
	for _, tc := range eventCases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(tc.body))
			if !tc.ok {
				if !errors.Is(err, ErrMalformedEvent) {
					t.Fatalf("got %+v, %v; want ErrMalformedEvent", ev, err)
				}
				return
			}
			if err != nil || ev != tc.want {
				t.Fatalf("got %+v, %v; want %+v", ev, err, tc.want)
			}
		})
	}
	if got := (Event{GrantID: "ci"}).From(); got != "external:ci" {
		t.Fatalf("From() = %q", got)
	}
}
