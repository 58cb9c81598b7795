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
}
