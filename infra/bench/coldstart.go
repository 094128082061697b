package main

// The cold-start step: bootstrap sizes and time to the first event.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// coldStart reports every arm64 bootstrap's size and, for get-sale built for
// this machine, the time from process start to the first handled event,
// served by a minimal Lambda Runtime API.
func (b *bench) coldStart(bins string) error {
	b.printf("## Cold start\n\n`bootstrap` sizes (linux/arm64, `-tags lambda.norpc -trimpath -ldflags \"-s -w\"`, from `make build`). Target: at most 12 MB.\n\n| function | bytes | MB |\n|---|---|---|\n")
	paths, _ := filepath.Glob(filepath.Join(bins, "*", "bootstrap"))
	if len(paths) == 0 {
		return fmt.Errorf("no bootstraps under %s (run make build)", bins)
	}
	largest := int64(0)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		largest = max(largest, fi.Size())
		b.printf("| %s | %d | %.2f |\n", filepath.Base(filepath.Dir(p)), fi.Size(), float64(fi.Size())/1e6)
	}
	b.printf("\nLargest: %.2f MB.\n\n", float64(largest)/1e6)

	tmp, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := hostBuild(tmp, "get-sale"); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "get-sale")
	var runs []time.Duration
	for i := 0; i < 7; i++ {
		d, err := b.coldOnce(bin)
		if err != nil {
			return err
		}
		runs = append(runs, d)
	}
	b.printf("Process start to first handled event (`get-sale` built for this machine, a local Lambda Runtime API serving one `GET /api/v1/sales/100042` event, table on DynamoDB Local), 7 starts: median %s, min %s, max %s.\n\n",
		median(runs).Round(time.Millisecond/10), percentile(runs, 0).Round(time.Millisecond/10), percentile(runs, 1).Round(time.Millisecond/10))
	return nil
}

// coldOnce starts the function once and times it to its first response.
func (b *bench) coldOnce(bin string) (time.Duration, error) {
	event := fmt.Sprintf(`{"version":"2.0","rawPath":"/api/v1/sales/100042","rawQueryString":"","headers":{"authorization":"Bearer %s"},"requestContext":{"domainName":"x","stage":"$default","http":{"method":"GET","path":"/api/v1/sales/100042"}}}`, b.key)
	p, err := b.startLambda(bin, "get-sale")
	if err != nil {
		return 0, err
	}
	defer p.stop()
	body, err := p.invoke([]byte(event), time.Minute)
	d := time.Since(p.started)
	if err != nil {
		return 0, err
	}
	if !strings.Contains(body, `"statusCode":200`) {
		return 0, fmt.Errorf("first event answered %s", body)
	}
	return d, nil
}
