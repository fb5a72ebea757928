#include "npuplan/support/echo.h"

#include <gtest/gtest.h>

#include <string>

namespace npuplan {
namespace {

using namespace std::string_literals;

TEST(EchoTest, EscapesLineBreaksSoANameCannotForgeASecondLine) {
  EXPECT_EQ(EchoName("x\nerror: forged"), "x\\nerror: forged");
  EXPECT_EQ(EchoName("a\r\tb"), "a\\r\\tb");
}

TEST(EchoTest, EscapesNulSoTheMessageIsNotCutShort) {
  const std::string name = "before\0after"s;
  EXPECT_EQ(EchoName(name), "before\\0after");
  EXPECT_EQ(EchoMessage("node '" + name + "' is bad"), "node 'before\\0after' is bad");
}

TEST(EchoTest, EscapesTerminalControlsAndKeepsPrintableUtf8) {
  EXPECT_EQ(EchoName("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(EchoName("\xc2\x9b"
                     "2J"),
            "\\u009b2J");  // C1 CSI
  EXPECT_EQ(EchoName("a\xe2\x80\xae"
                     "b"),
            "a\\u202eb");  // right-to-left override
  EXPECT_EQ(EchoName("conv_\xe5\x8d\xb7\xe7\xa7\xaf"), "conv_\xe5\x8d\xb7\xe7\xa7\xaf");  // 卷积
  EXPECT_EQ(EchoName("bad\xff\xc3"), "bad\\xff\\xc3");     // not UTF-8
  EXPECT_EQ(EchoName("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8 either
}

TEST(EchoTest, NamesEscapeBackslashesMessagesDoNot) {
  EXPECT_EQ(EchoName("a\\nb"), "a\\\\nb");  // a literal backslash-n stays distinguishable
  EXPECT_EQ(EchoMessage("C:\\dir"), "C:\\dir");
}

TEST(EchoTest, CapsALongNameAtACharacterBoundaryWithItsSize) {
  const std::string longname(1 << 20, 'n');
  const std::string echoed = EchoName(longname);
  EXPECT_EQ(echoed, std::string(kMaxEchoedNameBytes, 'n') + "… (1048576 bytes)");
  // 199 ASCII bytes then a 3-byte character: the cut does not split it.
  const std::string mixed = std::string(199, 'a') + "\xe5\x8d\xb7" + std::string(10, 'b');
  EXPECT_EQ(EchoName(mixed), std::string(199, 'a') + "… (212 bytes)");
  EXPECT_EQ(EchoName(std::string(200, 'z')), std::string(200, 'z'));
}

TEST(EchoTest, ShortensALongMessageKeepingBothEnds) {
  const std::string message = "file.json: node '" + std::string(100000, 'x') + "' has a cycle";
  const std::string echoed = EchoMessage(message, 300);
  EXPECT_LE(echoed.size(), 360u);
  EXPECT_EQ(echoed.rfind("file.json: node 'xxx", 0), 0u);
  EXPECT_NE(echoed.find("bytes cut"), std::string::npos);
  EXPECT_EQ(echoed.substr(echoed.size() - 13), "' has a cycle");
  EXPECT_EQ(EchoMessage("short"), "short");
}

}  // namespace
}  // namespace npuplan
