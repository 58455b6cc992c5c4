//===- ShapeInference.cpp - ONNX shape inference, crash-isolated ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The child runs inference on its copy-on-write view of the model and writes
// back, for each graph in a fixed depth-first order, a GraphProto holding
// only the graph's inputs, outputs and value_info. The parent copies those
// types into its model. Weights are never copied.
//
//===----------------------------------------------------------------------===//

#include "ShapeInference.h"
#include "ProtoChecks.h"

#include "llvm/ADT/STLExtras.h"

#include <cerrno>
#include <cstring>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#define TTT_SANDBOXED_INFERENCE 1
#endif

using namespace mlir::ttt::onnx;

/// The graphs of `graph` in the order both processes agree on: the graph,
/// then depth-first the graph attributes of each node.
static void collectGraphs(pb::GraphProto &graph,
                          std::vector<pb::GraphProto *> &graphs) {
  graphs.push_back(&graph);
  for (pb::NodeProto &node : *graph.mutable_node())
    for (pb::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        collectGraphs(*attr.mutable_g(), graphs);
      for (pb::GraphProto &sub : *attr.mutable_graphs())
        collectGraphs(sub, graphs);
    }
}

#ifndef TTT_SANDBOXED_INFERENCE
std::string mlir::ttt::onnx::inferShapes(pb::ModelProto &model) {
  return inferShapesInProcess(model);
}
#else

// Under libFuzzer, a sanitizer report in the child must not be taken for a
// crash of the fuzzed code: the child drops the death callback.
// NOLINTNEXTLINE(bugprone-reserved-identifier,readability-identifier-naming)
extern "C" void __sanitizer_set_death_callback(void (*)(void))
    __attribute__((weak));

/// The child: infer, then send the types back on `fd`. Never returns.
[[noreturn]] static void runChild(pb::ModelProto &model, int fd) {
  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback(nullptr);
  // A crash must end the child quietly: default signal dispositions, no
  // stderr.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
    signal(sig, SIG_DFL);
  int devNull = open("/dev/null", O_WRONLY);
  if (devNull >= 0)
    dup2(devNull, STDERR_FILENO);

  pb::GraphProto reply;
  reply.set_doc_string(inferShapesInProcess(model));
  std::vector<pb::GraphProto *> graphs;
  collectGraphs(*model.mutable_graph(), graphs);
  for (pb::GraphProto *graph : graphs) {
    pb::GraphProto *types = reply.add_node()->add_attribute()->mutable_g();
    types->mutable_input()->Swap(graph->mutable_input());
    types->mutable_output()->Swap(graph->mutable_output());
    types->mutable_value_info()->Swap(graph->mutable_value_info());
  }
  std::string bytes = reply.SerializeAsString();
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left != 0) {
    ssize_t written = write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      _exit(2);
    data += written;
    left -= written;
  }
  _exit(0);
}

/// Copies the types of `reply` (from the child) into the graphs of `model`.
static bool applyReply(pb::GraphProto &reply, pb::ModelProto &model) {
  std::vector<pb::GraphProto *> graphs;
  collectGraphs(*model.mutable_graph(), graphs);
  if (static_cast<size_t>(reply.node_size()) != graphs.size())
    return false;
  for (auto [index, graph] : llvm::enumerate(graphs)) {
    pb::NodeProto *node = reply.mutable_node(index);
    if (node->attribute_size() != 1)
      return false;
    pb::GraphProto *types = node->mutable_attribute(0)->mutable_g();
    if (types->input_size() != graph->input_size() ||
        types->output_size() != graph->output_size())
      return false;
    for (int i = 0, e = graph->input_size(); i < e; ++i)
      *graph->mutable_input(i)->mutable_type() = types->input(i).type();
    for (int i = 0, e = graph->output_size(); i < e; ++i)
      *graph->mutable_output(i)->mutable_type() = types->output(i).type();
    graph->mutable_value_info()->Swap(types->mutable_value_info());
  }
  return true;
}

std::string mlir::ttt::onnx::inferShapes(pb::ModelProto &model) {
  int fds[2];
  if (pipe(fds) != 0)
    return std::string("cannot start it: ") + std::strerror(errno);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::string("cannot start it: ") + std::strerror(errno);
  }
  if (pid == 0) {
    close(fds[0]);
    runChild(model, fds[1]);
  }
  close(fds[1]);

  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    ssize_t got = read(fds[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    bytes.append(buffer, got);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (WIFSIGNALED(status))
    return "ONNX shape inference crashed on this model (signal " +
           std::to_string(WTERMSIG(status)) + ")";
  pb::GraphProto reply;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !reply.ParseFromString(bytes) || !applyReply(reply, model))
    return "ONNX shape inference failed on this model";
  return reply.doc_string();
}
#endif
