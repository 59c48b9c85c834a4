package mcp

import (
	"encoding/json"
	"slices"

	"agent/mcp/jsonrpc"
)

// Protocol revisions this package speaks (docs/reference/mcp.md, "Protocol
// revisions"; many servers in use still answer 2024-11-05 or 2025-03-26,
// and refusing them would refuse the ecosystem).
const (
	// Version20241105 is the first revision with initialize.
	Version20241105 = "2024-11-05"
	// Version20250326 brought Streamable HTTP, tool annotations, progress
	// messages and JSON-RPC batches (which only it has).
	Version20250326 = "2025-03-26"
	// Version20250618 removed batches and brought the MCP-Protocol-Version
	// header, structured tool output, titles and elicitation.
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// Version20260728 is the stateless revision: no initialize handshake
	// and no sessions; every request carries its version in _meta.
	Version20260728 = "2026-07-28"
)

// SupportedVersions returns the revisions this package speaks, newest
// first.
func SupportedVersions() []string {
	return []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}
}

func knownVersion(v string) bool { return slices.Contains(SupportedVersions(), v) }

// Revision identifiers are dates, so they order as strings. Features a
// revision lacks are not used with a peer that negotiated it
// (docs/reference/mcp.md, "Protocol revisions"); these say which revision
// has what.

// modern reports whether revision v is of the stateless era (2026-07-28
// "Versioning and Compatibility": per-request metadata instead of a
// handshake).
func modern(v string) bool { return v >= Version20260728 }

// versionHeader reports whether requests of revision v carry the
// MCP-Protocol-Version header over HTTP (2025-06-18 changelog item 8; the
// earlier revisions do not know it).
func versionHeader(v string) bool { return v >= Version20250618 }

// batches reports whether a peer of revision v may send JSON-RPC batches,
// which a receiver must then accept (2025-03-26 basic/index "Batching"):
// only 2025-03-26 has them.
func batches(v string) bool { return v == Version20250326 }

// annotations reports whether tool annotations exist in revision v
// (2025-03-26 changelog) and, with them, the message of a progress
// notification.
func annotations(v string) bool { return v >= Version20250326 }

// titles reports whether revision v has the title fields of tools and
// implementations (2025-06-18 changelog, other schema changes item 3).
func titles(v string) bool { return v >= Version20250618 }

// Error codes MCP adds to JSON-RPC's (2026-07-28 basic/index "Error
// Codes"; the last two are of earlier revisions and still accepted).
const (
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
	CodeResourceNotFound                = -32002 // 2025-11-25 and earlier
	CodeURLElicitationRequired          = -32042 // 2025-11-25 only
)

// Reserved _meta keys (2026-07-28 basic/index "_meta").
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Implementation names a client or server (the Implementation type of the
// schema).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// ServerCapabilities is what a server declared it supports: the parts
// this client acts on; Raw keeps the whole object.
type ServerCapabilities struct {
	Tools     *ToolsCapability     `json:"tools,omitempty"`
	Resources *ResourcesCapability `json:"resources,omitempty"`
	Prompts   *PromptsCapability   `json:"prompts,omitempty"`
	Logging   json.RawMessage      `json:"logging,omitempty"`
	Raw       json.RawMessage      `json:"-"`
}

// ToolsCapability is the "tools" server capability.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the "resources" server capability. Subscribe is
// read but not used: the client does not subscribe to resources.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// PromptsCapability is the "prompts" server capability.
type PromptsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ServerInfo is what the client learned while connecting.
type ServerInfo struct {
	ProtocolVersion string
	Implementation  Implementation
	Capabilities    ServerCapabilities
	Instructions    string
}

// Tool is one tool definition from tools/list (schema "Tool").
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        json.RawMessage  `json:"icons,omitempty"`
	Execution    json.RawMessage  `json:"execution,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`
}

// ToolAnnotations are the server's hints about a tool. They are untrusted
// unless the server is (MCP server/tools "Tool").
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// CallToolResult is the result of tools/call. IsError marks a tool-level
// failure the model should see, as opposed to a protocol error.
type CallToolResult struct {
	ResultType        string          `json:"resultType,omitempty"`
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// Content is one content block of a tool result: text, image, audio,
// resource_link or resource (an embedded resource, kept raw).
type Content struct {
	Type        string          `json:"type"`
	Text        string          `json:"text,omitempty"`
	Data        string          `json:"data,omitempty"` // base64, image and audio
	MimeType    string          `json:"mimeType,omitempty"`
	URI         string          `json:"uri,omitempty"` // resource_link
	Name        string          `json:"name,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Resource    json.RawMessage `json:"resource,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Resource is one entry of resources/list (schema "Resource").
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate is one entry of resources/templates/list: an RFC 6570
// URI template (schema "ResourceTemplate").
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is one item of resources/read: text, or a blob in
// base64 (schema "TextResourceContents" and "BlobResourceContents").
type ResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// Prompt is one entry of prompts/list (schema "Prompt").
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of prompts/get: a role (user or assistant)
// and one content block.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Root is one root the client offers a server (roots/list): a file://
// URI and a name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// LogMessage is one notifications/message of a server (server/utilities
// logging): an RFC 5424 level, the logger's name, and any JSON data.
type LogMessage struct {
	Level  string
	Logger string
	Data   json.RawMessage
}

// Progress is one notifications/progress for a call. Total is zero when
// the server did not say.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// Wire shapes of requests and results.

// requestMeta is the _meta of a request: the progress token, and in the
// stateless revision the per-request protocol fields (2026-07-28
// basic/index "Per-request protocol fields").
type requestMeta struct {
	ProgressToken      *jsonrpc.ID     `json:"progressToken,omitempty"`
	ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	ClientInfo         *Implementation `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	ClientCapabilities *struct{}       `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
}

type initializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    clientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// clientCapabilities are what the client declares in initialize: roots
// (without listChanged: the one root, the workspace, does not change in a
// session) and elicitation in both modes, each when the client was given
// what it needs to answer. Sampling is never declared.
type clientCapabilities struct {
	Roots       *struct{}        `json:"roots,omitempty"`
	Elicitation *elicitationCaps `json:"elicitation,omitempty"`
}

type elicitationCaps struct {
	Form struct{} `json:"form"`
	URL  struct{} `json:"url"`
}

type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

type metaOnlyParams struct {
	Meta *requestMeta `json:"_meta,omitempty"`
}

type discoverResult struct {
	ResultType        string          `json:"resultType,omitempty"`
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	ServerInfo        Implementation  `json:"serverInfo"`
	Instructions      string          `json:"instructions,omitempty"`
}

type listParams struct {
	Cursor string       `json:"cursor,omitempty"`
	Meta   *requestMeta `json:"_meta,omitempty"`
}

type uriParams struct {
	URI  string       `json:"uri"`
	Meta *requestMeta `json:"_meta,omitempty"`
}

type getPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      *requestMeta      `json:"_meta,omitempty"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      *requestMeta    `json:"_meta,omitempty"`
}

type listenParams struct {
	Notifications struct {
		ToolsListChanged     bool `json:"toolsListChanged,omitempty"`
		ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
		PromptsListChanged   bool `json:"promptsListChanged,omitempty"`
	} `json:"notifications"`
	Meta *requestMeta `json:"_meta,omitempty"`
}

type progressParams struct {
	ProgressToken jsonrpc.ID `json:"progressToken"`
	Progress      float64    `json:"progress"`
	Total         *float64   `json:"total,omitempty"`
	Message       string     `json:"message,omitempty"`
}

type cancelledParams struct {
	RequestID jsonrpc.ID `json:"requestId"`
	Reason    string     `json:"reason,omitempty"`
}

type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested,omitempty"`
}
