module corobench/bench/oracle

go 1.22
