package settings

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/gateway"
)

// Upstream is the provider named name as the model gateway calls it,
// with its real key and the vendor's API when it names no base URL; ok is
// false when no provider has that name. It reads Settings at each call,
// so a change applies from the next request.
func (s *Service) Upstream(ctx context.Context, name string) (up gateway.Upstream, ok bool, err error) {
	pc, err := s.Resolve(ctx, name)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return gateway.Upstream{}, false, nil
	} else if err != nil {
		return gateway.Upstream{}, false, err
	}
	up = gateway.Upstream{Kind: pc.Kind, BaseURL: pc.BaseURL, APIKey: pc.APIKey, OAuthToken: pc.OAuthToken, Model: pc.Model, Name: pc.Name}
	if up.BaseURL == "" && up.Kind == gateway.KindAnthropic {
		up.BaseURL = gateway.DefaultAnthropicBaseURL
	} else if up.BaseURL == "" {
		up.BaseURL = gateway.DefaultOpenAIBaseURL
	}
	return up, true, nil
}
