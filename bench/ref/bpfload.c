/*
 * Loads a BPF object, attaches every program in it, runs a command and
 * returns when it ends (the programs detach as this process exits).
 * bench/trace.py uses it for the floor row (floor.bpf.c).
 *
 * usage: bpfload OBJECT CMD [ARGS...]     (gcc bpfload.c -lbpf)
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: bpfload OBJECT CMD [ARGS...]\n");
		return 2;
	}
	struct bpf_object *o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "bpfload: cannot load %s\n", argv[1]);
		return 1;
	}
	struct bpf_program *p;
	bpf_object__for_each_program(p, o) {
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "bpfload: cannot attach %s\n", bpf_program__name(p));
			return 1;
		}
	}
	pid_t c = fork();
	if (c == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	int st;
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}
