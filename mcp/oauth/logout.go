package oauth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// LogoutResult says what a sign-out did.
type LogoutResult struct {
	// Revoked counts the tokens the server confirmed revoking.
	Revoked int
	// RevokeErr is why revocation failed or was not possible; the local
	// credentials are deleted either way. nil when every token was revoked
	// or the server offers no revocation endpoint (NoRevocation).
	RevokeErr    error
	NoRevocation bool
}

// Logout deletes an identity's stored tokens first, then asks the
// revocation endpoint recorded with them to revoke the refresh token and
// the access token (docs/reference/mcp.md, "Credentials"; RFC 7009).
// Missing credentials are ErrNotSignedIn. A failed revocation does not fail
// the sign-out: it is reported in the result.
func Logout(ctx context.Context, store *Store, id Identity, net NetOptions) (*LogoutResult, error) {
	creds, err := store.Load(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w to %s", ErrNotSignedIn, id.Name)
	}
	if err != nil {
		// An unreadable file (others can read it) is deleted all the same:
		// signing out must always remove local tokens.
		if derr := store.Delete(id); derr != nil {
			return nil, fmt.Errorf("deleting the credentials of %s: %w", id.Name, derr)
		}
		return &LogoutResult{RevokeErr: fmt.Errorf("the stored credentials could not be read, so nothing was revoked: %w", err)}, nil
	}
	if err := store.Delete(id); err != nil {
		return nil, fmt.Errorf("deleting the credentials of %s: %w", id.Name, err)
	}
	res := &LogoutResult{}
	if creds.RevocationEndpoint == "" {
		res.NoRevocation = true
		return res, nil
	}
	c := net.client()
	var errs []error
	for _, t := range []struct{ tok, hint string }{{creds.RefreshToken, "refresh_token"}, {creds.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		if err := revoke(ctx, c, creds, t.tok, t.hint, net.InsecureLoopback); err != nil {
			errs = append(errs, fmt.Errorf("revoking the %s: %w", t.hint, err))
			continue
		}
		res.Revoked++
	}
	res.RevokeErr = errors.Join(errs...)
	return res, nil
}
