#include "npuplan/pass/decision_log.h"

#include <nlohmann/json.hpp>

namespace npuplan {

std::string Remark::ToLine() const {
  std::string line = StrCat("[", pass, "] ", keyword);
  if (!text.empty()) line += StrCat(" ", text);
  for (const auto& [k, v] : fields) {
    bool quote = v.empty() || v.find(' ') != std::string::npos;
    line += quote ? StrCat(" ", k, "=\"", v, "\"") : StrCat(" ", k, "=", v);
  }
  return line;
}

std::string Remark::ToJson() const {
  nlohmann::ordered_json j;
  j["pass"] = pass;
  j["keyword"] = keyword;
  if (!text.empty()) j["text"] = text;
  nlohmann::ordered_json f = nlohmann::ordered_json::object();
  for (const auto& [k, v] : fields) f[k] = v;
  j["fields"] = std::move(f);
  return j.dump();
}

void DecisionLog::Add(Remark remark) {
  if (echo_ != nullptr) std::fprintf(echo_, "%s\n", remark.ToLine().c_str());
  if (keep_) remarks_.push_back(std::move(remark));
}

void DecisionLog::AppendFrom(DecisionLog&& buffer) {
  for (Remark& r : buffer.remarks_) Add(std::move(r));
  buffer.remarks_.clear();
}

std::vector<const Remark*> DecisionLog::WithKeyword(std::string_view keyword) const {
  std::vector<const Remark*> out;
  for (const Remark& r : remarks_) {
    if (r.keyword == keyword) out.push_back(&r);
  }
  return out;
}

std::string DecisionLog::ToJsonLines() const {
  std::string out;
  for (const Remark& r : remarks_) out += r.ToJson() + "\n";
  return out;
}

}  // namespace npuplan
