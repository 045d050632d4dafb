package settings_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

var (
	admin  = bullpen.Member{ID: 1, Handle: "admin", IsAdmin: true, Kind: bullpen.KindHuman}
	member = bullpen.Member{ID: 2, Handle: "bob", Kind: bullpen.KindHuman}
)

func open(t *testing.T, cfg store.Config) *settings.Service {
	t.Helper()
	db, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := settings.New(settings.Config{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// keyed answers only requests that carry key, like a real vendor: others
// get 401 with the vendor's own message.
func keyed(key, text string) llmtest.Handler {
	return func(r llmtest.CapturedRequest) llmtest.Reply {
		got := r.Header.Get("Authorization")
		if got == "" {
			got = "Bearer " + r.Header.Get("X-Api-Key")
		}
		if got != "Bearer "+key {
			return llmtest.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}
		}
		return llmtest.Reply{Text: text}
	}
}

func complete(t *testing.T, s *settings.Service, name string) (string, string) {
	t.Helper()
	p, resolved, err := s.Provider(context.Background(), name)
	if err != nil {
		t.Fatalf("Provider(%q): %v", name, err)
	}
	resp, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	if err != nil {
		t.Fatalf("Complete via %q: %v", resolved, err)
	}
	return resp.Text, resolved
}

// The first provider becomes the default; making another the default
// moves it; and the very next call goes to the new default, with no
// restart. An edit of the base URL is seen by the next call too.
func TestProviderChangesApplyToTheNextCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		a, b := llmtest.NewFakeOpenAI(keyed("key-a", "from A")), llmtest.NewFakeAnthropic(keyed("key-b", "from B"))
		defer a.Close()
		defer b.Close()
		s := open(t, cfg)
		ctx := context.Background()
		pa, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("alpha"), Kind: ptr("openai-compatible"), BaseURL: ptr(a.BaseURL()), APIKey: ptr("key-a")})
		if err != nil || !pa.IsDefault || pa.Kind != bullpen.ProviderOpenAI {
			t.Fatalf("create alpha = %+v, %v; want the default, kind openai", pa, err)
		}
		if text, name := complete(t, s, ""); text != "from A" || name != "alpha" {
			t.Fatalf("default answered %q as %q, want from A as alpha", text, name)
		}
		pb, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("beta"), Kind: ptr("anthropic"), BaseURL: ptr(b.BaseURL()), APIKey: ptr("key-b")})
		if err != nil || pb.IsDefault {
			t.Fatalf("create beta = %+v, %v; want not the default", pb, err)
		}
		if _, err := s.Update(ctx, admin, pb.ID, bullpen.ProviderInput{IsDefault: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if text, name := complete(t, s, ""); text != "from B" || name != "beta" {
			t.Fatalf("after the switch the default answered %q as %q, want from B as beta", text, name)
		}
		list, _ := s.Providers(ctx, admin)
		defaults := 0
		for _, p := range list {
			if p.IsDefault {
				defaults++
			}
		}
		if defaults != 1 {
			t.Errorf("%d defaults after the switch, want 1", defaults)
		}
		// alpha's key now points at the other fake: the next call fails
		// with the vendor's 401, proving the client was rebuilt.
		a2 := llmtest.NewFakeOpenAI(keyed("other", "from A2"))
		defer a2.Close()
		if _, err := s.Update(ctx, admin, pa.ID, bullpen.ProviderInput{BaseURL: ptr(a2.BaseURL())}); err != nil {
			t.Fatal(err)
		}
		p, _, _ := s.Provider(ctx, "alpha")
		if _, err := p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); !bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
			t.Errorf("after moving alpha to a server with another key: %v, want EUNAUTHORIZED", err)
		}
		if n := len(a2.Requests()); n != 1 {
			t.Errorf("the new base URL got %d requests, want 1", n)
		}
	})
}

// "Test connection" makes a real request: a wrong key shows the vendor's
// 401 text, the right one says it connected.
func TestTestConnection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		f := llmtest.NewFakeOpenAI(keyed("good-key", "OK"))
		defer f.Close()
		s := open(t, cfg)
		ctx := context.Background()
		p, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("local"), Kind: ptr("openai"), BaseURL: ptr(f.BaseURL()), APIKey: ptr("bad-key")})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Test(ctx, admin, p.ID)
		if err != nil || res.OK || !strings.Contains(res.Message, "Incorrect API key provided") {
			t.Errorf("test with a wrong key = %+v, %v; want not OK with the provider's message", res, err)
		}
		if _, err := s.Update(ctx, admin, p.ID, bullpen.ProviderInput{APIKey: ptr("good-key")}); err != nil {
			t.Fatal(err)
		}
		res, err = s.Test(ctx, admin, p.ID)
		if err != nil || !res.OK {
			t.Errorf("test with the right key = %+v, %v; want OK", res, err)
		}
		if _, err := s.Test(ctx, member, p.ID); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
			t.Errorf("a member's test: %v, want EFORBIDDEN", err)
		}
	})
}

// Bad input is refused with a clear error and changes nothing; an empty
// key on an edit keeps the stored key; non-admins are refused.
func TestProviderValidation(t *testing.T) {
	s := open(t, storetest.Config(t, store.SQLite))
	ctx := context.Background()
	cases := []struct {
		name  string
		in    bullpen.ProviderInput
		want  string
		field string // the field the error names, for the form to mark
	}{
		{"no kind", bullpen.ProviderInput{Name: ptr("x")}, "kind", ""},
		{"bad kind", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("gemini"), APIKey: ptr("k")}, "kind must be", "kind"},
		{"bad name", bullpen.ProviderInput{Name: ptr("Has Space"), Kind: ptr("openai"), APIKey: ptr("k")}, "provider name", "name"},
		{"scripted", bullpen.ProviderInput{Name: ptr("scripted"), Kind: ptr("openai"), APIKey: ptr("k")}, "simulation", "name"},
		{"bad url", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), BaseURL: ptr("ftp://h")}, "base_url", "base_url"},
		{"openai nothing", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai")}, "needs an API key", ""},
		{"anthropic nothing", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("anthropic")}, "needs an API key or an OAuth token", ""},
		{"oauth on openai", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr("k"), OAuthToken: ptr("t")}, "Anthropic providers only", "oauth_token"},
		{"embeddings on anthropic", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("anthropic"), APIKey: ptr("k"), EmbeddingsModel: ptr("e")}, "OpenAI-compatible providers only", "embeddings_model"},
		{"embeddings with a space", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr("k"), EmbeddingsModel: ptr("text embedding")}, "not a model name", "embeddings_model"},
		{"embeddings with a tab", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr("k"), EmbeddingsModel: ptr("model:\tx")}, "not a model name", "embeddings_model"},
		{"embeddings too long", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr("k"), EmbeddingsModel: ptr(strings.Repeat("e", 201))}, "longer than 200", "embeddings_model"},
		{"model too long", bullpen.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr("k"), Model: ptr(strings.Repeat("m", 201))}, "longer than 200", "model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(ctx, admin, tc.in)
			if !bullpen.IsCode(err, bullpen.EINVALID) || !strings.Contains(bullpen.ErrorMessage(err), tc.want) {
				t.Errorf("Create = %v, want EINVALID mentioning %q", err, tc.want)
			}
			if f := bullpen.ErrorField(err); f != tc.field {
				t.Errorf("Create's error names the field %q, want %q", f, tc.field)
			}
		})
	}
	if list, _ := s.Providers(ctx, admin); len(list) != 0 {
		t.Fatalf("refused input stored %d providers", len(list))
	}
	p, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("claude"), Kind: ptr("anthropic"), OAuthToken: ptr("sk-ant-oat-secret-1234")})
	if err != nil || p.OAuthTokenHint != "…1234" || p.APIKeyHint != "" {
		t.Fatalf("create with an OAuth token = %+v, %v", p, err)
	}
	if _, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("claude"), Kind: ptr("openai"), APIKey: ptr("k")}); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Errorf("a second provider named claude: %v, want ECONFLICT", err)
	}
	up, err := s.Update(ctx, admin, p.ID, bullpen.ProviderInput{APIKey: ptr(""), Model: ptr("claude-x")})
	if err != nil || up.OAuthToken != "sk-ant-oat-secret-1234" || up.Model != "claude-x" {
		t.Errorf("edit with an empty key = %+v, %v; want the token kept", up, err)
	}
	emb, err := s.Create(ctx, admin, bullpen.ProviderInput{Name: ptr("local"), Kind: ptr("openai"), APIKey: ptr("k"), EmbeddingsModel: ptr(" text-embedding-3-small ")})
	if err != nil || emb.EmbeddingsModel != "text-embedding-3-small" {
		t.Fatalf("create with an embeddings model = %+v, %v", emb, err)
	}
	if emb, err = s.Update(ctx, admin, emb.ID, bullpen.ProviderInput{EmbeddingsModel: ptr("")}); err != nil || emb.EmbeddingsModel != "" {
		t.Errorf("clearing the embeddings model = %+v, %v", emb, err)
	}
	if _, err := s.Update(ctx, admin, emb.ID, bullpen.ProviderInput{Model: ptr("gpt-x"), EmbeddingsModel: ptr("text embedding")}); bullpen.ErrorField(err) != "embeddings_model" {
		t.Errorf("an edit to a bad embeddings model = %v, want an error about embeddings_model", err)
	}
	if got, _ := s.Get(ctx, admin, emb.ID); got.Version != emb.Version || got.Model != "" || got.EmbeddingsModel != "" {
		t.Errorf("a refused edit changed the provider: %+v", got)
	}
	if _, err := s.Update(ctx, admin, p.ID, bullpen.ProviderInput{ClearOAuthToken: true}); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Errorf("clearing the only secret: %v, want EINVALID", err)
	}
	for name, err := range map[string]error{
		"list":   second(s.Providers(ctx, member)),
		"create": second(s.Create(ctx, member, bullpen.ProviderInput{Name: ptr("y"), Kind: ptr("openai"), APIKey: ptr("k")})),
		"update": second(s.Update(ctx, member, p.ID, bullpen.ProviderInput{Model: ptr("m")})),
		"delete": s.Delete(ctx, member, p.ID),
	} {
		if !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
			t.Errorf("member %s: %v, want EFORBIDDEN", name, err)
		}
	}
	if err := s.Delete(ctx, admin, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Provider(ctx, ""); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("Provider after deleting the only one: %v, want ENOTFOUND", err)
	}
}

func second[T any](_ T, err error) error { return err }
