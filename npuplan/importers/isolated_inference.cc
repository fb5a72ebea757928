#include "npuplan/importers/isolated_inference.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <exception>
#include <string>

#include "npuplan/support/str_util.h"
#include "npuplan/importers/onnx_schemas.h"
#include "onnx/defs/schema.h"

namespace npuplan::onnx_import {
namespace {

absl::Status InferInProcess(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  try {
    onnx::shape_inference::InferShapes(model, Schemas(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return absl::OkStatus();
}

// The graphs' weights stay in the parent: the child clears them before
// sending — initializers, and the tensors of attributes (exporters often keep
// weights in Constant nodes) — and the parent moves its own back into the
// received graphs. Inference adds and retypes values (value_info, subgraph
// inputs and outputs) but never adds, drops or reorders nodes or attributes,
// nor changes an attribute other than a subgraph, so both trees have the same
// shape (checked) and the parent's attributes are the originals.
void DropWeights(onnx::GraphProto& g) {
  g.clear_initializer();
  g.clear_sparse_initializer();
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) DropWeights(*a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) DropWeights(sub);
      a.clear_t();
      a.clear_tensors();
      a.clear_sparse_tensor();
      a.clear_sparse_tensors();
    }
  }
}

bool SameTree(const onnx::GraphProto& a, const onnx::GraphProto& b) {
  if (a.node_size() != b.node_size()) return false;
  for (int i = 0; i < a.node_size(); ++i) {
    const onnx::NodeProto& an = a.node(i);
    const onnx::NodeProto& bn = b.node(i);
    if (an.attribute_size() != bn.attribute_size()) return false;
    for (int k = 0; k < an.attribute_size(); ++k) {
      const onnx::AttributeProto& aa = an.attribute(k);
      const onnx::AttributeProto& ba = bn.attribute(k);
      if (aa.has_g() != ba.has_g() || aa.graphs_size() != ba.graphs_size()) return false;
      if (aa.has_g() && !SameTree(aa.g(), ba.g())) return false;
      for (int j = 0; j < aa.graphs_size(); ++j) {
        if (!SameTree(aa.graphs(j), ba.graphs(j))) return false;
      }
    }
  }
  return true;
}

// Requires SameTree(from, to).
void RestoreWeights(onnx::GraphProto& from, onnx::GraphProto& to) {
  to.mutable_initializer()->Swap(from.mutable_initializer());
  to.mutable_sparse_initializer()->Swap(from.mutable_sparse_initializer());
  for (int i = 0; i < from.node_size(); ++i) {
    onnx::NodeProto& f = *from.mutable_node(i);
    onnx::NodeProto& t = *to.mutable_node(i);
    for (int k = 0; k < f.attribute_size(); ++k) {
      onnx::AttributeProto& fa = *f.mutable_attribute(k);
      onnx::AttributeProto& ta = *t.mutable_attribute(k);
      if (fa.has_g() || fa.graphs_size() > 0) {
        if (fa.has_g()) RestoreWeights(*fa.mutable_g(), *ta.mutable_g());
        for (int j = 0; j < fa.graphs_size(); ++j) RestoreWeights(*fa.mutable_graphs(j), *ta.mutable_graphs(j));
      } else {
        ta.Swap(&fa);  // the original attribute, tensors included
      }
    }
  }
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child: default actions for the crash signals (so a fault kills it
// quietly instead of running the parent's handlers — a sanitizer's or a
// fuzzer's), infer, reply 'O' + graph or 'E' + message, and leave without
// running the parent's exit handlers.
[[noreturn]] void RunChild(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options, int fd) {
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  std::string reply;
  try {
    onnx::shape_inference::InferShapes(model, Schemas(), options);
    DropWeights(*model.mutable_graph());
    reply.push_back('O');
    model.graph().AppendToString(&reply);
  } catch (const std::exception& e) {
    reply.assign(1, 'E');
    reply.append(e.what());
  }
  _exit(WriteAll(fd, reply.data(), reply.size()) ? 0 : 3);
}

}  // namespace

absl::Status InferShapes(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options, bool isolate) {
  if (!isolate) return InferInProcess(model, options);
  Schemas();  // libonnx's registry and ours, built before the fork, not in every child
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(model, options, fds[1]);
  }
  close(fds[1]);
  std::string reply;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::AbortedError(StrCat("killed by signal ", sig, " (", strsignal(sig), ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    return absl::InternalError(StrCat("the inference process failed (exit status ", status, ")"));
  }
  if (reply[0] == 'E') return absl::InvalidArgumentError(reply.substr(1));
  onnx::GraphProto inferred;
  if (reply[0] != 'O' || reply.size() - 1 > static_cast<size_t>(INT_MAX) ||
      !inferred.ParseFromArray(reply.data() + 1, static_cast<int>(reply.size() - 1)) ||
      !SameTree(model.graph(), inferred)) {
    return absl::InternalError("the inference process sent back a malformed graph");
  }
  RestoreWeights(*model.mutable_graph(), inferred);
  model.mutable_graph()->Swap(&inferred);
  return absl::OkStatus();
}

}  // namespace npuplan::onnx_import
