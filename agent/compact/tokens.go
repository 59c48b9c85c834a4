package compact

import (
	"encoding/json"

	"agent/providers"
)

// Accounting (docs/reference/runtime.md, "Context management"): what a
// provider has not counted yet is estimated from its size.
const (
	// ImageTokens is what an image is counted as: the providers scale
	// images to about this many tokens at most.
	ImageTokens = 1600
	// messageOverhead is the bytes counted for each message's framing
	// (role, separators) besides its content.
	messageOverhead = 12
)

// Tokens estimates the tokens of n bytes of UTF-8 text: n / 4, times 4/3
// for safety, rounded up.
func Tokens(n int) int {
	if n <= 0 {
		return 0
	}
	return (n + 2) / 3
}

// Estimate is the estimated tokens of msgs.
func Estimate(msgs []providers.Message) int {
	bytes, images := 0, 0
	for _, m := range msgs {
		b, im := messageSize(m)
		bytes += b
		images += im
	}
	return Tokens(bytes) + images*ImageTokens
}

// EstimateMessage is the estimated tokens of one message.
func EstimateMessage(m providers.Message) int {
	b, im := messageSize(m)
	return Tokens(b) + im*ImageTokens
}

// EstimateTools is the estimated tokens of the tool definitions a request
// offers.
func EstimateTools(ts []providers.Tool) int {
	n := 0
	for _, t := range ts {
		n += len(t.Name) + len(t.Description) + len(t.Schema) + messageOverhead
	}
	return Tokens(n)
}

// messageSize is the bytes of a message's text (its reasoning, tool calls
// and tool results included) and its number of images.
func messageSize(m providers.Message) (bytes, images int) {
	bytes = messageOverhead
	for _, p := range m.Content {
		b, im := partSize(p)
		bytes += b
		images += im
	}
	return bytes, images
}

func partSize(p providers.Part) (bytes, images int) {
	switch p := p.(type) {
	case providers.Text:
		return len(p.Text), 0
	case providers.Reasoning:
		return len(p.Text) + len(p.Redacted), 0
	case providers.ToolCall:
		return len(p.ID) + len(p.Name) + len(p.Arguments), 0
	case providers.ToolResult:
		bytes = len(p.CallID)
		for _, c := range p.Content {
			b, im := partSize(c)
			bytes += b
			images += im
		}
		return bytes, images
	case providers.Image:
		return 0, 1
	}
	return 0, 0
}

// resultSize is the estimated tokens of a tool result's body.
func resultSize(r providers.ToolResult) int {
	b, im := partSize(r)
	return Tokens(b) + im*ImageTokens
}

// compactJSON is args on one line, for the placeholder of a cleared result.
func compactJSON(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(args)
	}
	return string(b)
}
