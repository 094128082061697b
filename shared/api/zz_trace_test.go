package api_test

import (
	"fmt"
	"os"
	"sort"
	"sync"
)

var traceMu sync.Mutex
var traceCounts = map[string]int{}

func trace(k string) { traceMu.Lock(); traceCounts[k]++; traceMu.Unlock() }

func dumpTrace() {
	traceMu.Lock()
	defer traceMu.Unlock()
	var ks []string
	for k := range traceCounts {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(os.Stderr, "TRACE %s %d\n", k, traceCounts[k])
	}
}
