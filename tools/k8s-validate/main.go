// Command k8s-validate checks Kubernetes manifests offline against the API's
// own Go types: every object is decoded strictly into its typed struct (an
// unknown or misspelt field, a wrong type or a malformed quantity is an
// error, as the API server's strict field validation would report), names
// and labels are checked with apimachinery's validators, and Pods and Job
// templates must have Guaranteed QoS with whole CPUs, which the static CPU
// manager needs in order to pin them, and mount only volumes they declare;
// a kubernetes.io/tls Secret must hold a PEM certificate and the key that
// goes with it.
//
//	go run . DIR-OR-FILE...
//
// Exit status 0 when every manifest passes, 1 otherwise, 2 for bad usage.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-validate DIR-OR-FILE... (JSON manifests, one object or a v1 List per file)")
		os.Exit(2)
	}
	files, err := manifestFiles(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s-validate:", err)
		os.Exit(2)
	}
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "k8s-validate: no .json manifests in", strings.Join(os.Args[1:], " "))
		os.Exit(2)
	}
	failed := 0
	for _, file := range files {
		problems := validateFile(file)
		for _, problem := range problems {
			fmt.Printf("FAIL %s: %s\n", file, problem)
		}
		if len(problems) > 0 {
			failed++
		}
	}
	fmt.Printf("%d passed, %d failed\n", len(files)-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// manifestFiles lists the .json files named or found under the folders named.
func manifestFiles(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, arg)
			continue
		}
		err = filepath.WalkDir(arg, func(path string, entry os.DirEntry, err error) error {
			if err == nil && !entry.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}
