package office_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// An E2B key has E2B's shape, acts as the member who minted it, is one of
// that member's tokens (revoking it kills the key, at once), and is good
// only as an E2B key: a Bullpen token is not one, nor is an E2B key a
// Bearer token of the native API.
func TestE2BKeys(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
			_, off := openClocked(t, d, c)
			ctx := context.Background()
			secret, err := off.Bootstrap(ctx, "admin")
			if err != nil {
				t.Fatal(err)
			}
			admin, err := off.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			key, tok, err := off.MintE2BKey(ctx, admin)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`^e2b_[0-9a-f]{40}$`).MatchString(key) || !office.ValidE2BKeyShape(key) {
				t.Fatalf("key %q is not E2B-shaped", key)
			}
			m, err := off.AuthenticateE2B(ctx, key)
			if err != nil || m.ID != admin.ID {
				t.Fatalf("AuthenticateE2B = %v, %v", m, err)
			}
			if _, err := off.Authenticate(ctx, key); !bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
				t.Errorf("an E2B key as a Bullpen token: %v", err)
			}
			for _, bad := range []string{secret, "e2b_" + strings.Repeat("0", 40), "e2b_" + strings.ToUpper(key[4:]), key + "0", "e2b_", ""} {
				if _, err := off.AuthenticateE2B(ctx, bad); !bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
					t.Errorf("AuthenticateE2B(%q) = %v, want unauthorized", bad, err)
				}
			}
			ts, err := off.Tokens(ctx, admin)
			if err != nil || len(ts) != 2 {
				t.Fatalf("Tokens = %v, %v", ts, err)
			}
			if err := off.RevokeToken(ctx, admin, tok.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := off.AuthenticateE2B(ctx, key); !bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
				t.Errorf("a revoked key still works: %v", err)
			}
		})
	}
}
