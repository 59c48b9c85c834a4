package agent

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"agent/internal/quote"
	"agent/mcp"
)

// MCP prompts as slash commands (docs/reference/mcp.md, "Prompts"): each
// prompt of a connected server is /mcp__<server>__<prompt>; its words fill
// the prompt's arguments, and the prompt the server returns is sent as the
// turn's prompt.

// PromptCommand describes one MCP prompt as the slash menu shows it.
type PromptCommand struct {
	Name        string // "/mcp__server__prompt"
	Description string
	ArgHint     string // "<file> [focus]": required arguments in <>, optional in []
}

// MCPPromptCommands lists the prompts of the connected servers.
func (c *WorkspaceSession) MCPPromptCommands() []PromptCommand {
	var out []PromptCommand
	for _, p := range c.MCP.Prompts() {
		desc := oneLine(cmp.Or(p.Prompt.Description, p.Prompt.Title), 200)
		if desc == "" {
			desc = "prompt " + p.Prompt.Name
		}
		out = append(out, PromptCommand{Name: "/" + p.Command, Description: fmt.Sprintf("(MCP %s) %s", p.Server, desc), ArgHint: argHint(p.Prompt.Arguments)})
	}
	return out
}

func argHint(args []mcp.PromptArgument) string {
	var parts []string
	for _, a := range args {
		if a.Required {
			parts = append(parts, "<"+a.Name+">")
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

// IsMCPPromptCommand reports whether a command word names an MCP prompt
// (whether or not such a prompt exists now).
func IsMCPPromptCommand(word string) bool {
	return strings.HasPrefix(word, "/"+mcp.PromptCommandPrefix)
}

// MCPPromptRequest fetches the prompt that words ("/mcp__s__p", then the
// arguments) name and returns the turn that sends it. An argument is given
// as name=value, or by position in the prompt's order; the last
// positional one takes the rest of the words. A missing required argument
// is a usage error naming them all.
func (c *WorkspaceSession) MCPPromptRequest(ctx context.Context, words []string) (TurnRequest, error) {
	command := strings.TrimPrefix(words[0], "/")
	var found *mcp.ServerPrompt
	for _, p := range c.MCP.Prompts() {
		if p.Command == command {
			found = &p
			break
		}
	}
	if found == nil {
		return TurnRequest{}, fmt.Errorf("no MCP prompt %s: its server is not connected, or no longer offers it (see /mcp)", words[0])
	}
	args, err := promptArgs(found.Prompt.Arguments, words[1:])
	if err != nil {
		return TurnRequest{}, fmt.Errorf("%w: %s %s (%v)", ErrUsage, words[0], argHint(found.Prompt.Arguments), err)
	}
	res, err := c.MCP.GetPrompt(ctx, command, args)
	if err != nil {
		return TurnRequest{}, err
	}
	text := renderPrompt(res.Messages)
	if strings.TrimSpace(text) == "" {
		return TurnRequest{}, fmt.Errorf("MCP prompt %s is empty", words[0])
	}
	return TurnRequest{Prompt: text, Display: strings.Join(words, " ")}, nil
}

func promptArgs(decl []mcp.PromptArgument, words []string) (map[string]string, error) {
	args := map[string]string{}
	var positional []string
	for _, w := range words {
		if name, value, ok := strings.Cut(w, "="); ok && declared(decl, name) {
			args[name] = value
			continue
		}
		positional = append(positional, w)
	}
	var open []string
	for _, a := range decl {
		if _, set := args[a.Name]; !set {
			open = append(open, a.Name)
		}
	}
	for i, w := range positional {
		if len(open) == 0 {
			return nil, fmt.Errorf("too many arguments")
		}
		if len(open) == 1 {
			args[open[0]] = strings.Join(positional[i:], " ")
			open = nil
			break
		}
		args[open[0]] = w
		open = open[1:]
	}
	var missing []string
	for _, a := range decl {
		if _, set := args[a.Name]; a.Required && !set {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return args, nil
}

func declared(decl []mcp.PromptArgument, name string) bool {
	for _, a := range decl {
		if a.Name == name {
			return true
		}
	}
	return false
}

// renderPrompt turns a prompt's messages into the text of one prompt:
// user messages as they are; when the prompt also has assistant messages,
// each message is headed by its role. Embedded resources are inlined as
// <mcp-resource> elements; images, audio and links are described.
func renderPrompt(msgs []mcp.PromptMessage) string {
	mixed := false
	for _, m := range msgs {
		mixed = mixed || m.Role != "user"
	}
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if mixed {
			b.WriteString("[" + m.Role + "]\n")
		}
		b.WriteString(contentText(m.Content))
	}
	s := b.String()
	if len(s) > maxMCPResult {
		s = quote.PrefixN(s, maxMCPResult) + fmt.Sprintf("\n[the prompt was cut at %d bytes]", maxMCPResult)
	}
	return s
}

func contentText(c mcp.Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "resource":
		var r mcp.ResourceContents
		if json.Unmarshal(c.Resource, &r) != nil {
			return "[an embedded resource that could not be read]"
		}
		if r.Text != nil {
			return fmt.Sprintf("<mcp-resource uri=%q>\n%s\n</mcp-resource>", r.URI, *r.Text)
		}
		if r.Blob != nil {
			return fmt.Sprintf("[embedded resource %s: binary, %s, about %d bytes]", r.URI, cmp.Or(r.MimeType, "-"), base64.StdEncoding.DecodedLen(len(*r.Blob)))
		}
		return fmt.Sprintf("[embedded resource %s]", r.URI)
	case "resource_link":
		return fmt.Sprintf("[resource link %s]", c.URI)
	case "image", "audio":
		return fmt.Sprintf("[%s %s, about %d bytes]", c.Type, cmp.Or(c.MimeType, "-"), base64.StdEncoding.DecodedLen(len(c.Data)))
	}
	return fmt.Sprintf("[%s content]", c.Type)
}
