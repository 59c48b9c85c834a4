package events

import (
	"errors"

	"agent/internal/strictjson"
)

// MaxBodyBytes is the largest request body (docs/reference/events.md, "The
// endpoint"; 413 above).
const MaxBodyBytes = 16 << 10

// Event is an admitted external event as the session receives it
// (docs/reference/events.md, "The endpoint"). ClaimedName is the sender's
// word only: it is shown as a claim and never decides who sent the event
// (docs/reference/events.md, "The event's turn"); the sender is the grant.
// Content and ClaimedName are the sender's text: whatever shows them
// sanitises them first (docs/reference/cli.md, "Output streams").
type Event struct {
	GrantID        string
	ConversationID string
	Content        string
	ClaimedName    string // "" when the body had none
}

// From is the origin of the turn as transcripts record it:
// "external:<grantId>".
func (e Event) From() string { return "external:" + e.GrantID }

// ErrMalformedEvent is returned by ParseEvent for every body it refuses
// (400).
var ErrMalformedEvent = errors.New("malformed event")

// ParseEvent decodes an event body (docs/reference/events.md, "The
// endpoint"): strict JSON, an object with exactly kind ("message"),
// conversationId and content (non-empty strings) and optionally claimedName
// (a string). Anything else, an unknown member or a case variant of a known
// one included, is ErrMalformedEvent. The returned Event has no GrantID.
func ParseEvent(body []byte) (Event, error) {
	root, err := strictjson.Parse(body, strictjson.Options{MaxBytes: MaxBodyBytes, MaxDepth: 2})
	if err != nil || root.Kind != strictjson.Object {
		return Event{}, ErrMalformedEvent
	}
	var ev Event
	var kind, conv, content bool
	for _, m := range root.Members {
		v := m.Value
		if v.Kind != strictjson.String {
			return Event{}, ErrMalformedEvent
		}
		switch m.Key {
		case "kind":
			// Only "message" is defined, so no other kind is admitted.
			if v.Str != "message" {
				return Event{}, ErrMalformedEvent
			}
			kind = true
		case "conversationId":
			ev.ConversationID, conv = v.Str, v.Str != ""
		case "content":
			ev.Content, content = v.Str, v.Str != ""
		case "claimedName":
			ev.ClaimedName = v.Str
		default:
			return Event{}, ErrMalformedEvent
		}
	}
	if !kind || !conv || !content {
		return Event{}, ErrMalformedEvent
	}
	return ev, nil
}
