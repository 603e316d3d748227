<?php
use PHPUnit\Framework\TestCase;

final class PassTest extends TestCase
{
    public function testAdd(): void
    {
        $this->assertSame(4, 2 + 2);
    }

    public function testFailureMessageIsKept(): void
    {
        $this->assertStringContainsString('FAILURES', 'FAILURES! Tests: 1');
    }
}
