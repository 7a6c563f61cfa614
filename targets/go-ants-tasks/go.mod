module corobench/targets/go-ants-tasks

go 1.25.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/panjf2000/ants/v2 v2.12.1
)

require golang.org/x/sync v0.11.0 // indirect
