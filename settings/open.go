package settings

import "context"

// Open makes the settings service, seeds it from the environment
// (SeedFromEnv says the precedence) and learns every provider's models.
func Open(ctx context.Context, cfg Config, getenv func(string) string) (*Service, error) {
	svc, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := svc.SeedFromEnv(ctx, getenv); err != nil {
		return nil, err
	}
	if err := svc.LearnAll(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}
