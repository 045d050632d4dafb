package openapitest

import "fmt"

func errorf(format string, args ...any) error { return fmt.Errorf("openapitest: "+format, args...) }
