package dev.lease.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LeaseNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"invoice-42", "nightly.report", "tenant:7@eu", "a", "Ünïcode-name"})
    void acceptsOrdinaryNames(String name) {
        assertThat(LeaseNames.validate(name)).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", ".", "..", "a/b", "../etc", "a\\\\b", "tab\\there", "nul\\u0000", " padded"})
    void refusesNamesThatCouldEscapeTheirNamespace(String raw) {
        String name = raw.replace("\\\\", "\\").replace("\\t", "\t").replace("\\u0000", "\u0000");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseNames.validate(name))
                .withMessageContaining("Invalid lease name");
    }

    @org.junit.jupiter.api.Test
    void refusesOversizedNames() {
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseNames.validate("x".repeat(201)))
                .withMessageContaining("at most 200");
    }

    @ParameterizedTest
    @ValueSource(ints = {0x2028, 0x2029, 0x202E, 0x202A, 0x2066, 0x200E, 0x200B, 0x2060, 0xFEFF, 0x00AD, 0x061C, 0x0085,
            0xD800, 0xDC00})
    void refusesCharactersThatForgeLinesOrHideWhatANamePrintsAs(int codePoint) {
        String name = "invoice-" + (char) codePoint + "42";
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseNames.validate(name))
                .withMessageContaining(String.format("U+%04X", codePoint))
                .satisfies(ex -> assertThat(ex.getMessage()).doesNotContain(String.valueOf((char) codePoint))
                        .contains(String.format("invoice-\\u%04X42", codePoint)));
    }

    @org.junit.jupiter.api.Test
    void acceptsCharactersOutsideTheBasicPlane() {
        assertThat(LeaseNames.validate("report-\uD83D\uDCC8")).isEqualTo("report-\uD83D\uDCC8");
        assertThat(LeaseNames.printable("report-\uD83D\uDCC8")).isEqualTo("report-\uD83D\uDCC8");
    }

    @org.junit.jupiter.api.Test
    void printableEscapesWhatCouldForgeALogLineAndLeavesTheRestAlone() {
        assertThat(LeaseNames.printable("invoice-42")).isEqualTo("invoice-42");
        assertThat(LeaseNames.printable("a\r\nWARN forged")).isEqualTo("a\\u000D\\u000AWARN forged");
        assertThat(LeaseNames.printable("gnp.\u202Eexe")).isEqualTo("gnp.\\u202Eexe");
        assertThat(LeaseNames.printable(null)).isEqualTo("null");
    }
}
