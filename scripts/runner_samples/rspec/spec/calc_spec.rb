RSpec.describe "Calc" do
  it "adds" do
    expect(1 + 1).to eq(2)
  end

  it "handles failure messages" do
    expect("1 example, 1 failure").to include("failure")
  end

  it "is pending" do
    pending("not done")
    expect(1).to eq(2)
  end

  xit "is skipped" do
    expect(1).to eq(2)
  end
end
