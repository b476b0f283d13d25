// ctest-label: unit
// The text helpers of util/text.hpp: printable(), which every `fluxjac: error:` line passes through, so that a file
// name or value it quotes can neither split the line nor drive the terminal; quoted_file_text(), which also cuts a
// huge value from a file to a line's worth.
#include <gtest/gtest.h>

#include <string>

#include "util/text.hpp"

namespace fluxjac {
namespace {

TEST(Printable, EscapesEveryControlCharacterAndKeepsTheRest) {
  EXPECT_EQ(printable("a\nb\rc\td\x1b[31me"), "a\\nb\\rc\\td\\x1b[31me");
  EXPECT_EQ(printable(std::string("nul\0bel\a del\x7f", 13)), "nul\\x00bel\\x07 del\\x7f");
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "2J and nel\xc2\x85"),
            "csi\\u009b2J and nel\\u0085");  // C1 controls in UTF-8
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x86\x92 \xc2\xa0 \\n"), "caf\xc3\xa9 \xe2\x86\x92 \xc2\xa0 \\n");
  EXPECT_EQ(printable("ends in a lone \xc2"), "ends in a lone \\xc2");  // not UTF-8: escaped
  EXPECT_EQ(printable("latin-1 caf\xe9 and \x9b"), "latin-1 caf\\xe9 and \\x9b");
  EXPECT_EQ(printable(""), "");
  const std::string hostile = "x\n\x1b[2J\xc2\x9b\xff";
  EXPECT_EQ(printable(printable(hostile)), printable(hostile)) << "escaping twice changes nothing";
}

TEST(QuotedFileText, KeepsShortTextAndCutsLongTextAtACharacterWithItsLength) {
  EXPECT_EQ(quoted_file_text("A^T"), "A^T");
  EXPECT_EQ(quoted_file_text("a\nb"), "a\\nb");
  EXPECT_EQ(quoted_file_text(std::string(80, 'x')), std::string(80, 'x'));
  EXPECT_EQ(quoted_file_text(std::string(300000, 'x')), std::string(80, 'x') + "... (300000 bytes)");
  // A two-byte character across the cut is left out whole, not split into escapes.
  const std::string accented = std::string(79, 'x') + "\xc3\xa9" + std::string(100, 'y');
  EXPECT_EQ(quoted_file_text(accented), std::string(79, 'x') + "... (181 bytes)");
}

TEST(Printable, EveryPairOfBytesIsOneWholeCharacterOrComesOutAsPrintableAscii) {
  for (int first = 0; first < 256; ++first)
    for (int second = 0; second < 256; ++second) {
      const std::string text{static_cast<char>(first), static_cast<char>(second)};
      const std::string shown = printable(text);
      const bool one_character =
          first >= 0xc2 && first <= 0xdf && (second & 0xc0) == 0x80 && !(first == 0xc2 && second <= 0x9f);
      if (one_character) {
        EXPECT_EQ(shown, text);
        continue;
      }
      for (const unsigned char byte : shown)
        ASSERT_TRUE(byte >= 0x20 && byte < 0x7f)
            << "byte " << int(byte) << " left in the escape of bytes " << first << ", " << second << ": " << shown;
    }
}

}  // namespace
}  // namespace fluxjac
