package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.FencingToken;

class FencingTokenHeaderTest {

    @Test
    void writesTheContractForm() {
        assertThat(FencingTokenHeader.format(new FencingToken("invoice-42", 7))).isEqualTo("7;lease=\"invoice-42\"");
    }

    @Test
    void quotesAndEscapesNamesThatNeedIt() {
        assertThat(FencingTokenHeader.format(new FencingToken("say \"hi\" \\ there", 1)))
                .isEqualTo("1;lease=\"say \\\"hi\\\" \\\\ there\"");
        assertThat(FencingTokenHeader.format(new FencingToken("facture-é", 2))).isEqualTo("2;lease=%\"facture-%c3%a9\"");
        assertThat(FencingTokenHeader.format(new FencingToken("100%\"", 3))).isEqualTo("3;lease=\"100%\\\"\"");
        assertThat(FencingTokenHeader.format(new FencingToken("100%é", 3))).isEqualTo("3;lease=%\"100%25%c3%a9\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"invoice-42", "a\"b", "a\\b", "\"", "\\", "%", "%\"", " spaced out ", "facture-é",
            "請求書-42", "emoji-\uD83D\uDCB8", "tab\tinside", "mixed \"é\" \\ %41"})
    void roundTrips(String name) {
        FencingToken token = new FencingToken(name, 123_456_789_012_345L);
        assertThat(FencingTokenHeader.parse(FencingTokenHeader.format(token))).isEqualTo(token);
    }

    @Test
    void roundTripsRandomNames() {
        long seed = Long.getLong("lease-test.seed", new Random().nextLong());
        System.out.println("FencingTokenHeaderTest.roundTripsRandomNames seed " + seed
                + " (replay with -Dlease-test.seed=" + seed + ")");
        Random random = new Random(seed);
        String pool = "az09 -_:.\"\\%;=,()é請\uD83D\uDCB8\u00A0\t\u007F";
        for (int i = 0; i < 2_000; i++) {
            StringBuilder name = new StringBuilder();
            int length = 1 + random.nextInt(20);
            for (int j = 0; j < length; j++) {
                int at = random.nextInt(pool.length());
                char c = pool.charAt(at);
                name.append(Character.isHighSurrogate(c) ? pool.substring(at, at + 2)
                        : Character.isLowSurrogate(c) ? "x" : String.valueOf(c));
            }
            FencingToken token = new FencingToken(name.toString(), random.nextLong(FencingTokenHeader.MAX_TOKEN + 1));
            String header = FencingTokenHeader.format(token);
            assertThat(header.chars()).as("seed %d: %s", seed, header).allMatch(c -> c >= 0x20 && c <= 0x7E);
            assertThat(FencingTokenHeader.parse(header)).as("seed %d: %s", seed, header).isEqualTo(token);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            7;lease="a"                  | a | 7
            '  7;lease="a"  '            | a | 7
            7; lease="a"                 | a | 7
            7;lease="a";x=1.5;y;z=?0     | a | 7
            7;lease="a";lease="b"        | b | 7
            0;lease="a"                  | a | 0
            999999999999999;lease="a"    | a | 999999999999999
            7;x=tok/en:1;lease="a"       | a | 7
            7;x=:aGk=:;lease="a"         | a | 7
            7;x=@1700000000;lease="a"    | a | 7
            """)
    void readsWhatRfc9651Allows(String header, String lease, long value) {
        assertThat(FencingTokenHeader.parse(header)).isEqualTo(new FencingToken(lease, value));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ''                              | it is empty
            abc                             | must be an Integer
            -1;lease="a"                    | negative
            1.5;lease="a"                   | found a Decimal
            7                               | has no lease parameter
            7;lease                         | has no value
            7;lease=a                       | must be a String
            7;lease=1                       | must be a String
            7;lease="a                      | not closed
            7;lease="a\\x"                  | invalid escape
            1234567890123456;lease="a"      | more than 15 digits
            '7;lease="a", 8;lease="b"'      | unexpected ','
            7 ;lease="a"                    | unexpected ';'
            7;Lease="a"                     | expected a parameter name
            7;lease=%"%C3%A9"               | two lowercase hex digits
            7;lease=%"%c3"                  | not valid UTF-8
            7;lease=""                      | is empty
            7;lease="a";x=                  | has no value after
            7;lease="a";x=1.2345            | invalid number
            "7";lease="a"                   | must be an Integer
            """)
    void refusesAnythingElseSayingWhy(String header, String why) {
        assertThatThrownBy(() -> FencingTokenHeader.parse(header)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Malformed Fencing-Token header: ").hasMessageContaining(why);
    }

    @Test
    void refusesNonAsciiInsideAString() {
        assertThatThrownBy(() -> FencingTokenHeader.parse("7;lease=\"é\"")).hasMessageContaining("U+00E9")
                .hasMessageContaining("Display String");
    }

    @Test
    void refusesToSendTokensAnRfc9651IntegerCannotHold() {
        assertThatThrownBy(() -> FencingTokenHeader.format(new FencingToken("a", FencingTokenHeader.MAX_TOKEN + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease 'a'")
                .hasMessageContaining("in-memory");
        assertThatThrownBy(() -> FencingTokenHeader.format(new FencingToken("a", -1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencingTokenHeader.format(new FencingToken("broken-\uD83D", 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not valid Unicode");
    }
}
