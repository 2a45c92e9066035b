// Command docs rewrites the generated blocks of the project's Markdown documents from the code (make docs;
// package docgen says which): run it after changing what a block describes, and commit the result.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/docgen"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	files, err := docgen.Documents(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
	for _, f := range files {
		path := filepath.Join(*root, f)
		b, err := os.ReadFile(path)
		if err == nil {
			var out string
			if out, err = docgen.Apply(string(b)); err == nil && out != string(b) {
				err = os.WriteFile(path, []byte(out), 0o644)
				fmt.Println("docs: wrote", f)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "docs: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}
