/*
 * The pod sandbox's process (what registry.k8s.io/pause runs): it holds the pod's namespaces open, reaps
 * the orphans that end up as its children, and exits on SIGINT or SIGTERM. Built with gcc -static by
 * local/kube/images.ts, so its image is this one file.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal) {
  (void)signal;
  _exit(0);
}

static void reap(int signal) {
  (void)signal;
  while (waitpid(-1, 0, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction on_stop = {.sa_handler = stop};
  struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &on_stop, 0) < 0 || sigaction(SIGTERM, &on_stop, 0) < 0 || sigaction(SIGCHLD, &on_child, 0) < 0)
    return 1;
  for (;;) pause();
}
