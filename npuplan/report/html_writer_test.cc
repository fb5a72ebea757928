#include "npuplan/report/html_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace npuplan::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlWriterTest, EscapesMarkupCharactersAndControlBytes) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape(std::string("a\x01z", 3)), "a&#xFFFD;z");
  EXPECT_EQ(HtmlEscape("line\nnext"), "line\nnext");
}

TEST(HtmlWriterTest, FormatsNumbersWithoutTrailingZeros) {
  EXPECT_EQ(Num(12.5), "12.5");
  EXPECT_EQ(Num(3.0), "3");
  EXPECT_EQ(Num(-0.0001), "0");
  EXPECT_EQ(Num(1.0 / 3.0, 3), "0.333");
}

TEST(HtmlWriterTest, FormatsBytesWithExactCount) {
  EXPECT_EQ(Bytes(512), "512 B");
  EXPECT_EQ(Bytes(1536), "1.5 KiB (1536 B)");
  EXPECT_EQ(Bytes(3 * 1024 * 1024), "3 MiB (3145728 B)");
}

TEST(HtmlWriterTest, PicksNiceAxisTicks) {
  EXPECT_THAT(AxisTicks(10, 5), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(AxisTicks(7.5, 3), ElementsAre(0, 5));
  EXPECT_TRUE(AxisTicks(0).empty());
}

TEST(HtmlWriterTest, EscapesTitlesAndTextInsideSvg) {
  Svg svg("chart", 100, 50, "a <chart>");
  svg.Rect(1, 2, 3, 4, "#fff", "node <b>&\"x\"", "task");
  svg.Text(5, 6, "</svg><script>");
  const std::string out = svg.Finish();
  EXPECT_THAT(out, HasSubstr("<svg id=\"chart\""));
  EXPECT_THAT(out, HasSubstr("<title>node &lt;b&gt;&amp;&quot;x&quot;</title>"));
  EXPECT_THAT(out, HasSubstr("&lt;/svg&gt;&lt;script&gt;"));
  EXPECT_THAT(out, Not(HasSubstr("<script>")));
}

TEST(HtmlWriterTest, PageForbidsEveryFetchAndHasNoScript) {
  const std::string page = Page("t<", "<p>x</p>");
  EXPECT_THAT(page, HasSubstr("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
  EXPECT_THAT(page, HasSubstr("<title>t&lt;</title>"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
}

TEST(HtmlWriterTest, PageWithAScriptAllowsInlineScriptOnly) {
  const std::string page = Page("t", "<p>x</p>", "let a = 1;");
  EXPECT_THAT(page,
              HasSubstr("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\""));
  EXPECT_THAT(page, HasSubstr("<script>\nlet a = 1;</script>\n</body>"));
  EXPECT_THAT(page, Not(HasSubstr(" src=")));
}

}  // namespace
}  // namespace npuplan::report
