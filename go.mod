module agent

go 1.26.0

require (
	golang.org/x/oauth2 v0.37.0
	golang.org/x/term v0.47.0
)

require golang.org/x/sys v0.49.0 // indirect
