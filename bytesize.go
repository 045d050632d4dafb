package bullpen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var bytesRE = regexp.MustCompile(`^([0-9]+)\s*(|k|K|Ki|M|Mi|G|Gi)$`)

// ParseBytes reads a size like 512Mi, 2G or 1048576.
func ParseBytes(s string) (int64, error) {
	m := bytesRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size like 512Mi or 2Gi", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	mult := map[string]int64{"": 1, "k": 1000, "K": 1000, "Ki": 1 << 10, "M": 1e6, "Mi": 1 << 20, "G": 1e9, "Gi": 1 << 30}[m[2]]
	if n > (1<<46)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
